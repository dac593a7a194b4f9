/// What `iprp` says (ISO/IEC 23008-12 § 9.3): the properties (`ipco`) and
/// which items have which (`ipma`). Only what the walk checks is kept: each
/// property's type, an `ispe`'s size, whether an `auxC` names alpha, an
/// `irot`'s angle.
struct ISOBMFFProperties {
    struct Property {
        let type: FourCC
        let size: (width: UInt32, height: UInt32)?
        let isAlpha: Bool
        /// `irot`: anti-clockwise quarter turns, 0…3.
        var quarterTurns: Int? = nil
    }

    private(set) var properties: [Property] = []
    /// Item → its properties, as 1-based indices into `properties` (0, "none", dropped).
    private(set) var associations: [UInt32: [Int]] = [:]
    private var associationCount = 0
    private var sawContainer = false

    static let alphaTypes: Set<String> = ["urn:mpeg:mpegB:cicp:systems:auxiliary:alpha", "urn:mpeg:hevc:2015:auxid:1"]

    mutating func read(_ iprp: ISOBMFFBox, _ file: UnsafeRawBufferPointer, boxes: inout Int) throws(CodecError) {
        var children = try iprp.children(file)
        while let child = try children.next(counting: &boxes) {
            switch child.type {
            case FourCC("ipco"):
                guard !sawContainer else { throw .corrupt("ISOBMFF iprp: two ipco boxes") }
                sawContainer = true
                try readContainer(child, file, boxes: &boxes)
            case FourCC("ipma"):
                try readAssociations(child, file)
            default:
                continue
            }
        }
    }

    private mutating func readContainer(_ ipco: ISOBMFFBox, _ file: UnsafeRawBufferPointer, boxes: inout Int) throws(CodecError) {
        var children = try ipco.children(file)
        while let box = try children.next(counting: &boxes) {
            guard properties.count < ISOBMFFLimits.properties else {
                throw .tooComplex("ISOBMFF ipco: more than \(ISOBMFFLimits.properties) properties")
            }
            var size: (UInt32, UInt32)?
            var isAlpha = false
            var quarterTurns: Int?
            if box.type == FourCC("irot") {
                var reader = box.reader(file)
                guard let angle = reader.u8() else { throw .corrupt("ISOBMFF irot: truncated") }
                quarterTurns = Int(angle & 3)
            } else if box.type == FourCC("ispe") {
                var (_, _, reader) = try box.fullBox(file)
                guard let width = reader.u32be(), let height = reader.u32be() else { throw .corrupt("ISOBMFF ispe: truncated") }
                size = (width, height)
            } else if box.type == FourCC("auxC") {
                let (_, _, reader) = try box.fullBox(file)
                let rest = UnsafeRawBufferPointer(rebasing: reader.bytes[reader.offset...])
                let name = rest.prefix { $0 != 0 }
                isAlpha = Self.alphaTypes.contains(String(decoding: name, as: UTF8.self))
            }
            properties.append(Property(type: box.type, size: size, isAlpha: isAlpha, quarterTurns: quarterTurns))
        }
    }

    /// One `ipma` (there may be several): versions 0/1 (16/32-bit item IDs),
    /// flag 1 for 15-bit property indices instead of 7-bit.
    private mutating func readAssociations(_ ipma: ISOBMFFBox, _ file: UnsafeRawBufferPointer) throws(CodecError) {
        let (version, flags, fields) = try ipma.fullBox(file)
        var reader = fields
        guard version <= 1 else { throw .corrupt("ISOBMFF ipma: unknown version \(version)") }
        guard let count = reader.u32be() else { throw .corrupt("ISOBMFF ipma: truncated entry count") }
        guard count <= ISOBMFFLimits.items, associations.count + Int(count) <= ISOBMFFLimits.items else {
            throw .tooComplex("ISOBMFF ipma: entries for more than \(ISOBMFFLimits.items) items")
        }
        for _ in 0..<count {
            guard let item = version == 0 ? reader.u16be().map(UInt32.init) : reader.u32be(),
                  let listed = reader.u8() else {
                throw .corrupt("ISOBMFF ipma: truncated entry")
            }
            guard listed <= ISOBMFFLimits.associationsPerItem else {
                throw .tooComplex("ISOBMFF ipma: item \(item) has \(listed) properties, over \(ISOBMFFLimits.associationsPerItem)")
            }
            associationCount += Int(listed)
            guard associationCount <= ISOBMFFLimits.associations else {
                throw .tooComplex("ISOBMFF ipma: more than \(ISOBMFFLimits.associations) associations")
            }
            var indices: [Int] = []
            for _ in 0..<listed {
                let raw = flags & 1 != 0 ? reader.u16be().map { Int($0 & 0x7FFF) } : reader.u8().map { Int($0 & 0x7F) }
                guard let raw else { throw .corrupt("ISOBMFF ipma: truncated entry of item \(item)") }
                if raw != 0 { indices.append(raw) }
            }
            guard associations[item] == nil else { throw .corrupt("ISOBMFF ipma: item \(item) is listed twice") }
            associations[item] = indices
        }
    }

    /// Every associated index names a property in `ipco`.
    func checkIndices() throws(CodecError) {
        for (item, indices) in associations {
            if let bad = indices.first(where: { $0 > properties.count }) {
                throw .corrupt("ISOBMFF ipma: item \(item) has property \(bad), but ipco holds \(properties.count)")
            }
        }
    }

    /// The item's `ispe` size (its first), if it has one.
    func size(of item: UInt32) -> (width: UInt32, height: UInt32)? {
        for index in associations[item] ?? [] where index <= properties.count {
            if let size = properties[index - 1].size { return size }
        }
        return nil
    }

    /// The item's `irot` quarter turns (its first), 0 without one.
    func quarterTurns(of item: UInt32) -> Int {
        for index in associations[item] ?? [] where index <= properties.count {
            if let turns = properties[index - 1].quarterTurns { return turns }
        }
        return 0
    }

    /// Whether the item has a property of this type.
    func has(_ type: FourCC, _ item: UInt32) -> Bool {
        (associations[item] ?? []).contains { $0 <= properties.count && properties[$0 - 1].type == type }
    }

    /// Whether the item is an alpha plane (an `auxC` naming alpha).
    func isAlpha(_ item: UInt32) -> Bool {
        (associations[item] ?? []).contains { $0 <= properties.count && properties[$0 - 1].isAlpha }
    }
}
