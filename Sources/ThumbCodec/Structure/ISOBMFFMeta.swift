/// The `meta` box of an AVIF or HEIC file (ISO/IEC 23008-12 § 9, ISO/IEC
/// 14496-12 § 8.11), read in one pass over its children and then checked as
/// a whole, since its boxes may come in any order and refer to each other.
struct ISOBMFFMeta {
    var items = ISOBMFFItems()
    var locations = ISOBMFFLocations()
    var references = ISOBMFFReferences()
    var properties = ISOBMFFProperties()
    var idat: Range<Int>?

    /// Children that a file has at most once: libheif keeps the first,
    /// libavif refuses a second, so a second one is corrupt here.
    private static let unique: Set<FourCC> = [FourCC("hdlr"), FourCC("pitm"), FourCC("iloc"), FourCC("iinf"),
                                              FourCC("iref"), FourCC("iprp"), FourCC("idat"), FourCC("dinf")]

    init(_ meta: ISOBMFFBox, _ file: UnsafeRawBufferPointer, boxes: inout Int) throws(CodecError) {
        var seen = Set<FourCC>()
        var children = try meta.children(file, skipping: 4)   // a FullBox
        while let box = try children.next(counting: &boxes) {
            if Self.unique.contains(box.type) {
                guard seen.insert(box.type).inserted else { throw .corrupt("ISOBMFF meta: two \(box.type) boxes") }
            }
            switch box.type {
            case FourCC("pitm"): try items.readPrimary(box, file)
            case FourCC("iinf"): try items.readInfo(box, file, boxes: &boxes)
            case FourCC("iloc"): try locations.read(box, file)
            case FourCC("iref"): try references.read(box, file, boxes: &boxes)
            case FourCC("iprp"): try properties.read(box, file, boxes: &boxes)
            case FourCC("idat"): idat = box.payload
            case FourCC("dinf"): try ISOBMFFStructure.countTree(box, file, boxes: &boxes)
            default: continue
            }
        }
    }

    /// The whole table checked: every item a box names exists, every extent
    /// lies in the file, every derived image has the shape of a real one
    /// (`ISOBMFFGrid.check`), every coded image has bytes. Returns what the
    /// probe needs of the primary image and of its thumbnails; `box` is
    /// this `meta` box.
    func check(fileSize: Int, file: UnsafeRawBufferPointer, box: ISOBMFFBox) throws(CodecError) -> ISOBMFFLayout {
        try locations.checkBounds(fileSize: fileSize, idat: idat)
        try properties.checkIndices()
        if let primary = items.primary { try exists(primary, "pitm") }
        for item in locations.items.keys { try exists(item, "iloc") }
        for item in properties.associations.keys { try exists(item, "ipma") }
        for reference in references.all {
            try exists(reference.from, "iref")
            for item in reference.to { try exists(item, "iref") }
        }
        for (item, type) in items.types {
            if ISOBMFFItems.derived.contains(type) { try checkDerived(item, type: type, file: file) }
            if ISOBMFFItems.coded.contains(type), (locations.items[item]?.length ?? 0) == 0 {
                throw .corrupt("ISOBMFF: \(type) item \(item) has no data")
            }
        }
        var layout = layout(file: file)
        layout.thumbnails = thumbnails(coding: layout.coding, file: file)
        if layout.coding == .av1, !layout.thumbnails.isEmpty {
            // libavif reads a thumbnail only through the swap, whose copy of meta must stay small;
            // pitm version 0 holds 16-bit IDs (iinf can hold 32-bit ones).
            let swap = primarySwap(meta: box).flatMap { $0.meta.count <= ISOBMFFPrimarySwap.largestMeta ? $0 : nil }
            layout.primarySwap = swap
            layout.thumbnails.removeAll { swap == nil || swap?.primaryIDSize == 2 && $0.item > 0xFFFF }
        }
        return layout
    }

    private func exists(_ item: UInt32, _ box: String) throws(CodecError) {
        guard items.contains(item) else { throw .corrupt("ISOBMFF \(box): item \(item) does not exist") }
    }

    /// A derived image: a grid of coded tiles (`ISOBMFFGrid.check`), or an
    /// `iden`/`iovl` of grids or coded images. Nothing deeper, so no cycle can
    /// exist (libheif follows `dimg` chains recursively, and a loop of two
    /// grids would recurse until the stack ends).
    private func checkDerived(_ item: UInt32, type: FourCC, file: UnsafeRawBufferPointer) throws(CodecError) {
        let inputs = references.targets(FourCC("dimg"), from: item)
        guard !inputs.isEmpty else { throw .corrupt("ISOBMFF: \(type) item \(item) has no dimg inputs") }
        if type == FourCC("grid") {
            guard let payload = locations.prefix(of: item, count: 12, file: file, idat: idat) else {
                throw .corrupt("ISOBMFF grid \(item): no readable data")
            }
            try ISOBMFFGrid(payload: payload, item: item).check(item, tiles: inputs, in: self)
            return
        }
        guard inputs.count <= ISOBMFFLimits.gridTiles else {
            throw .tooComplex("ISOBMFF \(type) \(item): \(inputs.count) inputs, over \(ISOBMFFLimits.gridTiles)")
        }
        guard type != FourCC("iden") || inputs.count == 1 else { throw .corrupt("ISOBMFF iden \(item): more than one input") }
        guard Set(inputs).count == inputs.count else { throw .corrupt("ISOBMFF \(type) \(item): an input is named twice") }
        for input in inputs {
            let inputType = items.type(of: input)
            guard inputType == FourCC("grid") || !ISOBMFFItems.derived.contains(inputType),
                  !ISOBMFFItems.notImages.contains(inputType) else {
                throw .corrupt("ISOBMFF \(type) \(item): input \(input) is a \(inputType) item")
            }
        }
    }

    /// The coded images a decode of the primary item reads (its own, or its
    /// grid's tiles through any iden/iovl, and likewise for its alpha plane),
    /// which decoder takes them, and how many tiles it decodes.
    private func layout(file: UnsafeRawBufferPointer) -> ISOBMFFLayout {
        guard let primary = items.primary else { return ISOBMFFLayout(coding: nil, tiles: 0) }
        var decoded = [primary]
        // Its alpha plane: an auxl item whose auxC names alpha, on the item or,
        // for a grid, on its tiles (writers put it on either).
        for reference in references.all where reference.type == FourCC("auxl") && reference.to.contains(primary) {
            let tile = references.targets(FourCC("dimg"), from: reference.from).first
            if properties.isAlpha(reference.from) || tile.map(properties.isAlpha) == true { decoded.append(reference.from) }
        }
        var codings = Set<FourCC>()
        var tiles = 0
        func visit(_ item: UInt32) {
            let type = items.type(of: item)
            guard ISOBMFFItems.derived.contains(type) else { codings.insert(type); return }
            let inputs = references.targets(FourCC("dimg"), from: item)
            if type == FourCC("grid") { tiles += inputs.count }
            inputs.forEach(visit)   // depth at most 2: checkDerived
        }
        decoded.forEach(visit)
        let coding: ISOBMFFLayout.Coding
        if !codings.isEmpty, codings.isSubset(of: [FourCC("hvc1"), FourCC("hev1")]) { coding = .hevc }
        else if codings == [FourCC("av01")] { coding = .av1 }
        else { coding = .other }
        return ISOBMFFLayout(coding: coding, tiles: tiles)
    }
}
