/// What `iref` says (ISO/IEC 14496-12 § 8.11.12): typed references from one
/// item to others — `dimg` (a derived image's inputs, in order: a grid's
/// tiles), `thmb`, `auxl`, `cdsc`…
struct ISOBMFFReferences {
    struct Reference {
        let type: FourCC
        let from: UInt32
        let to: [UInt32]
        /// Where the reference box's type lies in the file (`ISOBMFFPrimarySwap` rewrites a `thmb`).
        let typeOffset: Int
    }

    private(set) var all: [Reference] = []
    /// (type, from) → index in `all`; one box per pair.
    private var index: [UInt64: Int] = [:]
    private var count = 0

    /// The whole box: 16-bit item IDs in version 0, 32-bit in version 1;
    /// at most `ISOBMFFLimits.references` target IDs in all.
    mutating func read(_ box: ISOBMFFBox, _ file: UnsafeRawBufferPointer, boxes: inout Int) throws(CodecError) {
        let (version, _, fields) = try box.fullBox(file)
        guard version <= 1 else { throw .corrupt("ISOBMFF iref: unknown version \(version)") }
        var children = try box.children(file, skipping: fields.offset)
        while let child = try children.next(counting: &boxes) {
            var reader = child.reader(file)
            func id() -> UInt32? { version == 0 ? reader.u16be().map(UInt32.init) : reader.u32be() }
            guard let from = id(), let targets = reader.u16be() else {
                throw .corrupt("ISOBMFF iref: truncated \(child.type) reference")
            }
            count += Int(targets)
            guard count <= ISOBMFFLimits.references else {
                throw .tooComplex("ISOBMFF iref: more than \(ISOBMFFLimits.references) references")
            }
            var to: [UInt32] = []
            to.reserveCapacity(Int(targets))
            for _ in 0..<targets {
                guard let target = id() else { throw .corrupt("ISOBMFF iref: truncated \(child.type) reference") }
                guard target != from else { throw .corrupt("ISOBMFF iref: item \(from) refers to itself") }
                to.append(target)
            }
            let key = UInt64(child.type.rawValue) << 32 | UInt64(from)
            // libheif reads only the first box of a pair, libavif every one.
            guard index[key] == nil else { throw .corrupt("ISOBMFF iref: two \(child.type) boxes from item \(from)") }
            index[key] = all.count
            all.append(Reference(type: child.type, from: from, to: to, typeOffset: child.start + 4))
        }
    }

    /// The items `from` refers to with `type`, in order.
    func targets(_ type: FourCC, from: UInt32) -> [UInt32] {
        index[UInt64(type.rawValue) << 32 | UInt64(from)].map { all[$0].to } ?? []
    }
}
