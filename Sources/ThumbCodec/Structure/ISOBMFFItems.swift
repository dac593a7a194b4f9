/// What `iinf` (its `infe` entries) and `pitm` say (ISO/IEC 14496-12
/// § 8.11.6, § 8.11.4): every item's type, and the primary item.
struct ISOBMFFItems {
    /// Item ID → item type (`av01`, `hvc1`, `grid`, `Exif`…; zero for
    /// version 0/1 entries, which carry none).
    private(set) var types: [UInt32: FourCC] = [:]
    private(set) var primary: UInt32?
    /// Where `pitm`'s item ID lies in the file and its size (2 or 4 bytes):
    /// what `ISOBMFFPrimarySwap` rewrites.
    private(set) var primaryField: (offset: Int, size: Int)?

    static let coded: Set<FourCC> = [FourCC("av01"), FourCC("hvc1"), FourCC("hev1")]
    static let derived: Set<FourCC> = [FourCC("grid"), FourCC("iden"), FourCC("iovl")]
    /// Items that hold no picture: a grid's tile or a derived image's input cannot be one.
    static let notImages: Set<FourCC> = [FourCC("Exif"), FourCC("mime"), FourCC("uri ")]

    func contains(_ item: UInt32) -> Bool { types[item] != nil }

    func type(of item: UInt32) -> FourCC { types[item] ?? FourCC(rawValue: 0) }

    /// `iinf`: its entry count and its `infe` boxes, both within `ISOBMFFLimits.items`.
    mutating func readInfo(_ box: ISOBMFFBox, _ file: UnsafeRawBufferPointer, boxes: inout Int) throws(CodecError) {
        let (version, _, fields) = try box.fullBox(file)
        var reader = fields
        let declared = version == 0 ? reader.u16be().map(Int.init) : reader.u32be().map(Int.init)
        guard let declared else { throw .corrupt("ISOBMFF iinf: truncated entry count") }
        guard declared <= ISOBMFFLimits.items else {
            throw .tooComplex("ISOBMFF iinf: \(declared) items, over \(ISOBMFFLimits.items)")
        }
        var entries = try box.children(file, skipping: reader.offset)
        while let entry = try entries.next(counting: &boxes) {
            if entry.type == FourCC("infe") { try readEntry(entry, file) }   // libheif skips any other box here too
        }
    }

    private mutating func readEntry(_ box: ISOBMFFBox, _ file: UnsafeRawBufferPointer) throws(CodecError) {
        let (version, _, fields) = try box.fullBox(file)
        var reader = fields
        let item: UInt32?
        var type = FourCC(rawValue: 0)
        switch version {
        case 0, 1:
            item = reader.u16be().map(UInt32.init)
        case 2, 3:
            item = version == 2 ? reader.u16be().map(UInt32.init) : reader.u32be()
            guard reader.skip(2), let code = reader.u32be() else { throw .corrupt("ISOBMFF infe: truncated item type") }
            type = FourCC(rawValue: code)
        default:
            throw .corrupt("ISOBMFF infe: unknown version \(version)")
        }
        guard let item else { throw .corrupt("ISOBMFF infe: truncated item ID") }
        guard types[item] == nil else { throw .corrupt("ISOBMFF infe: item \(item) is described twice") }
        guard types.count < ISOBMFFLimits.items else {
            throw .tooComplex("ISOBMFF iinf: more than \(ISOBMFFLimits.items) items")
        }
        types[item] = type
    }

    /// `pitm`: the primary item's ID (16 bits in version 0, else 32).
    mutating func readPrimary(_ box: ISOBMFFBox, _ file: UnsafeRawBufferPointer) throws(CodecError) {
        let (version, _, fields) = try box.fullBox(file)
        var reader = fields
        let start = box.payload.lowerBound + reader.offset
        guard let item = version == 0 ? reader.u16be().map(UInt32.init) : reader.u32be() else {
            throw .corrupt("ISOBMFF pitm: truncated item ID")
        }
        primary = item
        primaryField = (start, version == 0 ? 2 : 4)
    }
}
