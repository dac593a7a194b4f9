/// An `ImageGrid` derived image (ISO/IEC 23008-12 § 6.6.2.3): its payload,
/// read through `iloc`, and the checks that keep a grid to a shape real
/// encoders write. Its tiles are its `dimg` references, row by row.
struct ISOBMFFGrid {
    let rows: Int
    let columns: Int
    let width: UInt32
    let height: UInt32

    /// version 0; flags bit 0: 32-bit output sizes (else 16-bit); rows and
    /// columns minus one, one byte each.
    init(payload: [UInt8], item: UInt32) throws(CodecError) {
        guard payload.count >= 8 else { throw .corrupt("ISOBMFF grid \(item): fewer than 8 bytes") }
        guard payload[0] == 0 else { throw .corrupt("ISOBMFF grid \(item): unknown version \(payload[0])") }
        rows = Int(payload[2]) + 1
        columns = Int(payload[3]) + 1
        func field(_ at: Int, _ size: Int) -> UInt32 { payload[at..<at + size].reduce(0) { $0 << 8 | UInt32($1) } }
        if payload[1] & 1 != 0 {
            guard payload.count >= 12 else { throw .corrupt("ISOBMFF grid \(item): fewer than 12 bytes") }
            width = field(4, 4)
            height = field(8, 4)
        } else {
            width = field(4, 2)
            height = field(6, 2)
        }
        guard width > 0, height > 0 else { throw .corrupt("ISOBMFF grid \(item): no pixels") }
    }

    /// The grid against its tiles, from headers alone (nothing decoded):
    /// libavif checks the tile count, sizes and cover only after decoding
    /// every tile, libheif hardly at all.
    ///
    /// - the tile count within `ISOBMFFLimits.gridTiles` (`tooComplex`);
    /// - exactly rows × columns `dimg` references, each a distinct image item
    ///   (a tile named twice is the one-frame amplification: thousands of
    ///   decodes of one small item);
    /// - every tile the same `ispe` size, at least `ISOBMFFLimits.minimumTileSide`
    ///   on a side the grid splits (MIAF § 7.3.11.4.2: a one-tile grid, which
    ///   heif-enc writes to crop an odd-sized picture, may be smaller);
    /// - the tiles cover the output, and the last column and row overlap it
    ///   (HEIF § 6.6.2.3.1, MIAF § 7.3.11.4.2);
    /// - the grid's own `ispe`, when present, is its output size.
    func check(_ item: UInt32, tiles: [UInt32], in meta: ISOBMFFMeta) throws(CodecError) {
        let count = rows * columns
        guard count <= ISOBMFFLimits.gridTiles, tiles.count <= ISOBMFFLimits.gridTiles else {
            throw .tooComplex("ISOBMFF grid \(item): \(max(count, tiles.count)) tiles, over \(ISOBMFFLimits.gridTiles)")
        }
        guard tiles.count == count else {
            throw .corrupt("ISOBMFF grid \(item): \(rows)×\(columns) needs \(count) tiles, dimg names \(tiles.count)")
        }
        guard Set(tiles).count == count else { throw .corrupt("ISOBMFF grid \(item): a tile is named more than once") }
        var tileSize: (width: UInt32, height: UInt32)?
        for tile in tiles {
            let type = meta.items.type(of: tile)
            guard !ISOBMFFItems.derived.contains(type), !ISOBMFFItems.notImages.contains(type) else {
                throw .corrupt("ISOBMFF grid \(item): tile \(tile) is a \(type) item, not a coded image")
            }
            guard let size = meta.properties.size(of: tile) else { throw .corrupt("ISOBMFF grid \(item): tile \(tile) has no ispe") }
            if let first = tileSize, first != size { throw .corrupt("ISOBMFF grid \(item): tiles of different sizes") }
            tileSize = size
        }
        guard let tile = tileSize else { return }
        let minimum = UInt32(ISOBMFFLimits.minimumTileSide)
        guard columns == 1 || tile.width >= minimum, rows == 1 || tile.height >= minimum else {
            throw .corrupt("ISOBMFF grid \(item): \(tile.width)×\(tile.height) tiles, under \(minimum) px")
        }
        let (tw, th, cols, rs) = (UInt64(tile.width), UInt64(tile.height), UInt64(columns), UInt64(rows))
        guard tw * cols >= UInt64(width), th * rs >= UInt64(height),
              tw * (cols - 1) < UInt64(width), th * (rs - 1) < UInt64(height) else {
            throw .corrupt("ISOBMFF grid \(item): \(rows)×\(columns) tiles of \(tile.width)×\(tile.height) do not fit \(width)×\(height)")
        }
        if let own = meta.properties.size(of: item), own != (width, height) {
            throw .corrupt("ISOBMFF grid \(item): ispe \(own.width)×\(own.height) is not its \(width)×\(height)")
        }
    }
}
