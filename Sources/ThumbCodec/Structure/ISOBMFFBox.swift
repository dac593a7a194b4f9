/// One box of an ISOBMFF file (ISO/IEC 14496-12 § 4.2): its type and where
/// its payload lies, as offsets into the whole file, so that `iloc` offsets
/// and payloads share one coordinate system.
struct ISOBMFFBox {
    let type: FourCC
    /// Where the box starts (its size field), in file offsets.
    let start: Int
    /// The bytes after the header (size, type, largesize, uuid), in file offsets.
    let payload: Range<Int>

    /// A reader over the payload.
    func reader(_ file: UnsafeRawBufferPointer) -> StructureReader {
        StructureReader(UnsafeRawBufferPointer(rebasing: file[payload]))
    }

    /// A reader over the payload after a FullBox's version and flags, which it returns.
    func fullBox(_ file: UnsafeRawBufferPointer) throws(CodecError) -> (version: UInt8, flags: UInt32, StructureReader) {
        var reader = reader(file)
        guard let word = reader.u32be() else { throw .corrupt("ISOBMFF box \(type) is too short for its version and flags") }
        return (UInt8(word >> 24), word & 0xFF_FFFF, reader)
    }

    /// The boxes inside this one, after `skipping` bytes of its own fields.
    func children(_ file: UnsafeRawBufferPointer, skipping: Int = 0) throws(CodecError) -> ISOBMFFBoxes {
        guard skipping <= payload.count else { throw .corrupt("ISOBMFF box \(type) is too short for its fields") }
        return ISOBMFFBoxes(file, in: payload.lowerBound + skipping..<payload.upperBound)
    }
}

/// The boxes one after another in a range of the file (its top level, or a
/// container's payload). Each must end inside the range — a box past its
/// parent's end is `corrupt` — and every box read is counted against
/// `ISOBMFFLimits.boxes`, whose count the caller carries from box to box.
struct ISOBMFFBoxes {
    private let file: UnsafeRawBufferPointer
    private var offset: Int
    private let end: Int

    init(_ file: UnsafeRawBufferPointer, in range: Range<Int>) {
        self.file = file
        offset = range.lowerBound
        end = range.upperBound
    }

    /// The next box, or nil at the range's end.
    mutating func next(counting boxes: inout Int) throws(CodecError) -> ISOBMFFBox? {
        guard offset < end else { return nil }
        boxes += 1
        guard boxes <= ISOBMFFLimits.boxes else {
            throw .tooComplex("ISOBMFF: more than \(ISOBMFFLimits.boxes) boxes")
        }
        var header = StructureReader(UnsafeRawBufferPointer(rebasing: file[offset..<end]))
        guard let size32 = header.u32be(), let code = header.u32be() else {
            throw .corrupt("ISOBMFF: a box header runs past its parent's end")
        }
        let type = FourCC(rawValue: code)
        var size: UInt64
        switch size32 {
        case 0: size = UInt64(end - offset)   // "to the end": of the file, or of its parent
        case 1:
            guard let large = header.u64be() else { throw .corrupt("ISOBMFF box \(type): largesize runs past its parent's end") }
            size = large
        default: size = UInt64(size32)
        }
        if type == FourCC("uuid"), !header.skip(16) {
            throw .corrupt("ISOBMFF box \(type): its extended type runs past its parent's end")
        }
        guard size >= UInt64(header.offset) else { throw .corrupt("ISOBMFF box \(type) is smaller than its header") }
        guard size <= UInt64(end - offset) else { throw .corrupt("ISOBMFF box \(type) runs past its parent's end") }
        let box = ISOBMFFBox(type: type, start: offset, payload: offset + header.offset..<offset + Int(size))
        offset += Int(size)
        return box
    }
}
