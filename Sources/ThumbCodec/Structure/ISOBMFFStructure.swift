/// The ISOBMFF (AVIF, HEIC) structure walk (StructureWalk); its limits are
/// named in `ISOBMFFLimits` and in SourcesAndLimits.md § Structure limits.
///
/// One pass over the boxes, in time linear in the file's size: the top
/// level, `meta` and what it holds (`ISOBMFFMeta`: items, locations,
/// references, properties, grids), and the box tree of `moov` (an image
/// sequence's tracks). Every look-up afterwards is a dictionary's.
enum ISOBMFFStructure {
    static func walk(_ bytes: UnsafeRawBufferPointer, format: ImageFormat) throws(CodecError) -> ISOBMFFLayout {
        var boxes = 0
        var top = ISOBMFFBoxes(bytes, in: 0..<bytes.count)
        var metaBox: ISOBMFFBox?
        while let box = try top.next(counting: &boxes) {
            switch box.type {
            case FourCC("meta"):
                guard metaBox == nil else { throw .corrupt("ISOBMFF: two meta boxes") }
                metaBox = box
            case FourCC("moov"):
                try countTree(box, bytes, boxes: &boxes)
            default:
                continue
            }
        }
        guard let metaBox else { return ISOBMFFLayout(coding: nil, tiles: 0) }
        let meta = try ISOBMFFMeta(metaBox, bytes, boxes: &boxes)
        return try meta.check(fileSize: bytes.count, file: bytes, box: metaBox)
    }

    /// Containers whose children are boxes, and how many bytes of their own
    /// fields come first: the track tree libavif parses, and `dinf`/`dref`.
    private static let containers: [FourCC: Int] = [
        FourCC("moov"): 0, FourCC("trak"): 0, FourCC("mdia"): 0, FourCC("minf"): 0, FourCC("stbl"): 0,
        FourCC("edts"): 0, FourCC("dinf"): 0, FourCC("mvex"): 0, FourCC("tref"): 0,
        FourCC("dref"): 8, FourCC("stsd"): 8,   // FullBox and entry count
    ]

    /// Walks a container's tree: every box counted, every box inside its
    /// parent, nothing else read. A sample entry's own boxes (its av1C,
    /// colr…) are counted too, after the 78 bytes of a visual sample entry.
    static func countTree(_ box: ISOBMFFBox, _ file: UnsafeRawBufferPointer, boxes: inout Int,
                          depth: Int = 1, sampleEntries: Bool = false) throws(CodecError) {
        guard depth <= ISOBMFFLimits.nesting else {
            throw .tooComplex("ISOBMFF: boxes nested more than \(ISOBMFFLimits.nesting) deep")
        }
        let skip: Int
        if sampleEntries {
            guard box.payload.count >= 78 else { return }   // not a visual sample entry: nothing to count
            skip = 78
        } else {
            guard let own = containers[box.type] else { return }
            skip = own
        }
        var children = try box.children(file, skipping: skip)
        while let child = try children.next(counting: &boxes) {
            guard !sampleEntries else { continue }
            try countTree(child, file, boxes: &boxes, depth: depth + 1, sampleEntries: box.type == FourCC("stsd"))
        }
    }
}
