import Glibc
import ThumbFetch
import ThumbRender

extension OriginalFile {
    /// Writes the original into `sink` through a bounded buffer (a
    /// revalidated original is rewritten with new metadata without being held whole).
    func copy(into sink: some BodySink) throws(BodySinkError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: min(length, 1 << 20), alignment: 1)
        defer { buffer.deallocate() }
        var done = 0
        while done < length {
            let n = pread(span.descriptor, buffer.baseAddress!, min(buffer.count, length - done), off_t(span.offset + done))
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                throw BodySinkError("reading the stored original failed: \(String(cString: strerror(n < 0 ? errno : EIO)))")
            }
            try sink.write(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
            done += n
        }
    }
}
