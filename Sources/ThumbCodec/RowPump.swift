import CThumbCodec
import ThumbImaging

/// The row loop every decoder shares: batches of RGBA rows from a C shim's
/// read call into a sink, with an optional colour transform on each batch.
enum RowPump {
    static func failure(_ status: Int32, _ message: [CChar]) -> CodecError {
        do {
            try ImageDecoder.check(status, message)
            return .corrupt("decoder failed")
        } catch {
            return error
        }
    }

    /// Reads batches of rows until the image is complete, feeding the sink;
    /// `color` says how the rows relate to sRGB (a transform runs here, on
    /// each batch, before the sink sees it).
    static func run<S: ScanlineSink>(width: Int, height: Int, scale: Int, color: ColorHandling = .sRGB,
                                     into sink: inout S,
                                     read: (UnsafeMutableRawPointer, UInt32, UnsafeMutablePointer<UInt32>) -> Int32,
                                     onError: (Int32) -> CodecError) -> Result<DecodeInfo, CodecError> {
        let batch = min(ImageDecoder.batchRows, height)
        var buffer = [UInt8](repeating: 0, count: width * 4 * batch)
        sink.begin(width: width, height: height, color: color.sourceColorSpace)
        let transform: ColorTransform? = if case .transform(let t) = color { t } else { nil }
        var done = 0
        while done < height {
            var got: UInt32 = 0
            let status = buffer.withUnsafeMutableBytes { read($0.baseAddress!, UInt32(min(batch, height - done)), &got) }
            guard status == 0 else { return .failure(onError(status)) }
            guard got > 0 else { return .failure(.corrupt("image data ends early")) }
            if let transform {
                buffer.withUnsafeMutableBytes { transform.convertRGBA(UnsafeMutableRawBufferPointer(rebasing: $0[..<(Int(got) * width * 4)])) }
            }
            buffer.withUnsafeBytes { sink.consume(UnsafeRawBufferPointer(rebasing: $0[..<(Int(got) * width * 4)]), rowCount: Int(got)) }
            done += Int(got)
        }
        return .success(DecodeInfo(width: width, height: height, scaleNumerator: scale))
    }
}
