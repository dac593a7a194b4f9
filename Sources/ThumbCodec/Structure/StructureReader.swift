import Glibc

/// A bounds-checked cursor over a file's bytes for the structure walks:
/// every read either succeeds inside the buffer or returns nil, so a walk
/// over hostile bytes cannot read past the end or trap on arithmetic.
struct StructureReader {
    let bytes: UnsafeRawBufferPointer
    private(set) var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = min(max(0, offset), bytes.count)
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset >= bytes.count }

    mutating func u8() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16be() -> UInt16? { read(2, bigEndian: true).map { UInt16($0) } }
    mutating func u16le() -> UInt16? { read(2, bigEndian: false).map { UInt16($0) } }
    mutating func u32be() -> UInt32? { read(4, bigEndian: true).map { UInt32($0) } }
    mutating func u64be() -> UInt64? { read(8, bigEndian: true) }

    /// An unsigned big-endian integer of `size` bytes (0…8; ISOBMFF's
    /// `offset_size`, `length_size` and friends), nil past the end.
    mutating func uint(size: Int) -> UInt64? {
        guard (0...8).contains(size) else { return nil }
        return read(size, bigEndian: true)
    }

    /// Moves `count` bytes on; false (and no move) if that passes the end.
    @discardableResult
    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= remaining else { return false }
        offset += count
        return true
    }

    /// Moves to the next `byte` at or after the cursor and returns true, or to
    /// the end and returns false. memchr, because JPEG entropy-coded data is
    /// most of a file and is searched for markers byte by byte otherwise.
    mutating func seek(to byte: UInt8) -> Bool {
        guard remaining > 0, let base = bytes.baseAddress,
              let found = memchr(base + offset, Int32(byte), remaining) else {
            offset = bytes.count
            return false
        }
        offset = UnsafeRawPointer(found) - base
        return true
    }

    /// A reader over the next `count` bytes (a box's payload), advancing past them.
    mutating func sub(_ count: Int) -> StructureReader? {
        guard count >= 0, count <= remaining else { return nil }
        defer { offset += count }
        return StructureReader(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
    }

    private mutating func read(_ size: Int, bigEndian: Bool) -> UInt64? {
        guard remaining >= size else { return nil }
        var value: UInt64 = 0
        for i in 0..<size {
            let byte = UInt64(bytes[offset + (bigEndian ? i : size - 1 - i)])
            value = value << 8 | byte
        }
        offset += size
        return value
    }
}
