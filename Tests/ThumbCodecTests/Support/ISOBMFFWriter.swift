/// Writes small AVIF and HEIC files box by box, for the structure walk's
/// tests: the hostile shapes of issue 19 (Tests/Benchmarks/hostile_isobmff.py
/// writes the same ones for the attack scripts) and malformed variants of
/// sound files. Items' bytes go to one `mdat`, located by a version 0–2 `iloc`
/// with 4-byte offsets and lengths; IDs over 16 bits switch every box that
/// names items to its 32-bit version.
struct ISOBMFFWriter {
    var brand = "avif"
    var primary: UInt32? = 1
    var items: [(id: UInt32, type: String)] = []
    var properties: [[UInt8]] = []
    /// Item → 1-based indices into `properties` (0x80 marks essential, as in
    /// ipma's 7-bit form; with over 127 properties the indices are plain).
    var associations: [(id: UInt32, indices: [Int])] = []
    var references: [(type: String, from: UInt32, to: [UInt32])] = []
    /// Item → its bytes; an item in `shares` uses another item's bytes instead.
    var data: [(id: UInt32, bytes: [UInt8])] = []
    var shares: [UInt32: UInt32] = [:]
    /// More children of meta, after the usual ones, and more top-level boxes after mdat.
    var extraMeta: [[UInt8]] = []
    var extraTop: [[UInt8]] = []
    /// A meta child written as these bytes instead (by type: "iloc", "iinf", "iref", "iprp"…).
    var overrides: [String: [UInt8]] = [:]

    /// A 64×64 flat grey AV1 frame and its av1C (`avifenc -s 10`, libavif 0.11.1 with aom).
    static let av1C: [UInt8] = [0x81, 0x20, 0x00, 0x00]
    static let av1Frame: [UInt8] = hex("12000a0938157ffd8404341a40320c1a00134d34c400b7134e9c40")
    /// A 64×64 flat grey HEVC frame and its hvcC (`heif-enc -q 10`, libheif 1.15.1 with x265).
    static let hvcC: [UInt8] = hex("0103700000000000000000001ef000fcfdf8f800000f03200001001840010c01ffff037000"
        + "00030090000003000003001eba0240210001002b4201010370000003009000000300000300"
        + "1ea020810596ea4929ae6e04040c08000003000800000300084022000100074401c172b02240")
    static let hevcFrame: [UInt8] = hex("0000000a2801af0418fc4ad79bc0")

    // MARK: Shapes

    /// One AV1 image; with rows × columns > 1, a grid of that many tile items
    /// (IDs 2…), their extents all pointing at one frame when `shared`.
    static func avif(rows: Int = 1, columns: Int = 1, tile: UInt32 = 64, shared: Bool = true) -> ISOBMFFWriter {
        var file = ISOBMFFWriter()
        file.properties = [ispe(tile, tile), box("av1C", av1C)]
        guard rows * columns > 1 else {
            file.items = [(1, "av01")]
            file.associations = [(1, [1, 0x82])]
            file.data = [(1, av1Frame)]
            return file
        }
        file.makeGrid(rows: rows, columns: columns, tile: tile, tileType: "av01", tileProperties: [1, 0x82],
                      frame: av1Frame, shared: shared)
        return file
    }

    /// A rows × columns HEVC grid of tiles declared `tile` px (the frame is
    /// 64 px): every dimg reference naming one item (`oneItem`), or distinct
    /// tile items sharing one frame's bytes.
    static func heic(rows: Int, columns: Int, tile: UInt32 = 64, oneItem: Bool = false) -> ISOBMFFWriter {
        var file = ISOBMFFWriter()
        file.brand = "heic"
        file.properties = [box("hvcC", hvcC), ispe(tile, tile)]
        file.makeGrid(rows: rows, columns: columns, tile: tile, tileType: "hvc1", tileProperties: [0x81, 2],
                      frame: hevcFrame, shared: true)
        if oneItem {
            file.references = [("dimg", 1, Array(repeating: 2, count: rows * columns))]
            file.items = Array(file.items.prefix(2))
            file.associations = Array(file.associations.prefix(2))
            file.data = Array(file.data.prefix(2))
            file.shares = [:]
        }
        return file
    }

    private mutating func makeGrid(rows: Int, columns: Int, tile: UInt32, tileType: String, tileProperties: [Int],
                                   frame: [UInt8], shared: Bool) {
        properties.append(ISOBMFFWriter.ispe(tile * UInt32(columns), tile * UInt32(rows)))
        let tiles = (0..<UInt32(rows * columns)).map { $0 + 2 }
        items = [(1, "grid")] + tiles.map { ($0, tileType) }
        associations = [(1, [properties.count])] + tiles.map { ($0, tileProperties) }
        references = [("dimg", 1, tiles)]
        data = [(1, ISOBMFFWriter.gridPayload(rows: rows, columns: columns, width: tile * UInt32(columns),
                                               height: tile * UInt32(rows)))]
        data += shared ? [(tiles[0], frame)] : tiles.map { ($0, frame) }
        if shared { for tile in tiles.dropFirst() { shares[tile] = tiles[0] } }
    }

    // MARK: Boxes

    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        be32(UInt32(8 + payload.count)) + Array(type.utf8) + payload
    }

    static func full(_ type: String, version: UInt8 = 0, flags: UInt32 = 0, _ payload: [UInt8]) -> [UInt8] {
        box(type, be32(UInt32(version) << 24 | flags) + payload)
    }

    static func ispe(_ width: UInt32, _ height: UInt32) -> [UInt8] { full("ispe", be32(width) + be32(height)) }

    static func gridPayload(rows: Int, columns: Int, width: UInt32, height: UInt32) -> [UInt8] {
        let large = width > 0xFFFF || height > 0xFFFF
        let sizes = large ? be32(width) + be32(height) : be16(UInt16(width)) + be16(UInt16(height))
        return [0, large ? 1 : 0, UInt8(rows - 1), UInt8(columns - 1)] + sizes
    }

    static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    static func be32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * $0)) } }

    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    // MARK: The file

    func bytes() -> [UInt8] {
        var blob: [UInt8] = []
        var placed: [UInt32: (offset: Int, length: Int)] = [:]
        for (id, bytes) in data {
            placed[id] = (blob.count, bytes.count)
            blob += bytes
        }
        for (id, owner) in shares { placed[id] = placed[owner] }
        let head = ISOBMFFWriter.box("ftyp", Array(brand.utf8) + [0, 0, 0, 0] + Array(brand.utf8) + Array("mif1miaf".utf8))
        let start = head.count + meta(placed, mdatStart: 0).count + 8
        return head + meta(placed, mdatStart: start) + ISOBMFFWriter.box("mdat", blob) + extraTop.joined()
    }

    private func meta(_ placed: [UInt32: (offset: Int, length: Int)], mdatStart: Int) -> [UInt8] {
        typealias W = ISOBMFFWriter
        let ids = items.map(\.id) + associations.map(\.id) + references.flatMap { [$0.from] + $0.to } + [primary ?? 0]
        let wide = ids.contains { $0 > 0xFFFF }
        func id(_ v: UInt32) -> [UInt8] { wide ? W.be32(v) : W.be16(UInt16(v)) }
        var children = [W.full("hdlr", [0, 0, 0, 0] + Array("pict".utf8) + [UInt8](repeating: 0, count: 13))]
        if let primary { children.append(W.full("pitm", version: wide ? 1 : 0, id(primary))) }
        let located = placed.sorted { $0.key < $1.key }
        let locations = located.flatMap { item, place in
            id(item) + (wide ? [0, 0] : []) + [0, 0] + W.be16(1) + W.be32(UInt32(mdatStart + place.offset))
                + W.be32(UInt32(place.length))
        }
        children.append(W.full("iloc", version: wide ? 2 : 0, [0x44, 0x00] + (wide ? W.be32(UInt32(located.count))
                                                                                   : W.be16(UInt16(located.count))) + locations))
        let entries = items.map { W.full("infe", version: wide ? 3 : 2, id($0.id) + [0, 0] + Array($0.type.utf8) + [0]) }
        children.append(W.full("iinf", version: wide ? 1 : 0,
                               (wide ? W.be32(UInt32(entries.count)) : W.be16(UInt16(entries.count))) + entries.joined()))
        if !references.isEmpty {
            let boxes = references.map { W.box($0.type, id($0.from) + W.be16(UInt16($0.to.count)) + $0.to.flatMap(id)) }
            children.append(W.full("iref", version: wide ? 1 : 0, boxes.joined().map { $0 }))
        }
        let wideIndices = properties.count > 127
        let entriesOfIpma = associations.flatMap { item, indices in
            // 15-bit indices once there are over 127 properties: then plain indices, none essential.
            id(item) + [UInt8(indices.count)] + indices.flatMap { wideIndices ? W.be16(UInt16($0)) : [UInt8($0)] }
        }
        let ipma = W.full("ipma", version: wide ? 1 : 0, flags: wideIndices ? 1 : 0,
                          W.be32(UInt32(associations.count)) + entriesOfIpma)
        children.append(W.box("iprp", W.box("ipco", properties.joined().map { $0 }) + ipma))
        let written = children.map { child in overrides[String(decoding: child[4..<8], as: UTF8.self)] ?? child }
        return W.full("meta", (written + extraMeta).joined().map { $0 })
    }
}
