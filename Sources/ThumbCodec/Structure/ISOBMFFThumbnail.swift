/// A thumbnail item of the primary image (`thmb` reference, ISO/IEC 23008-12
/// § 6.4.7 / HEIF 8.4) that a render may decode instead of the primary
/// (`ImageDecoder.embeddedThumbnail`). Only shapes both decoders handle the
/// way they handle the primary are kept (`ISOBMFFMeta.thumbnails`).
struct ISOBMFFThumbnail: Sendable, Equatable, Codable {
    let item: UInt32
    /// Size after its `irot` (from its `ispe`, or a grid's own size; a
    /// thumbnail with `clap` is not kept).
    let width: Int
    let height: Int
    /// It has an alpha plane (an `auxl` item naming alpha, of its own size).
    let hasAlpha: Bool
    /// Tiles of its grid (and of its alpha plane's), 0 for a coded item:
    /// libavif holds a dav1d decoder per tile (`ImageDecoder.avifWorkingBytes`).
    let tiles: Int
    /// Where the type of its `thmb` reference box lies in the file (`ISOBMFFPrimarySwap`).
    let referenceTypeOffset: Int

    /// Tiles a thumbnail's grid may have, its alpha plane's grid apart:
    /// heif-enc writes a one-tile grid for a size its encoder cannot code
    /// directly; phones write a single coded image. More would be a
    /// thumbnail costing more per pixel than the primary.
    static let largestGrid = 4
}

/// Where the bytes lie that make libavif 0.11, which decodes no thumbnail
/// item (`AVIF_DECODER_SOURCE_THUMBNAIL_ITEM` is unimplemented), decode one
/// as its primary image: `pitm`'s item ID, rewritten to the thumbnail's, and
/// the thumbnail's `thmb` reference type, renamed so that libavif no longer
/// skips the item as a thumbnail. Both lie inside the `meta` box, which the
/// decoder reads from a patched copy (avif.c); the file itself is never written.
struct ISOBMFFPrimarySwap: Sendable, Equatable, Codable {
    /// The whole `meta` box, header included.
    let meta: Range<Int>
    let primaryIDOffset: Int
    /// 2 (`pitm` version 0) or 4 bytes.
    let primaryIDSize: Int

    /// The largest `meta` box the swap copies, header included: 1 MiB. Real
    /// AVIF `meta` boxes take a few KB (an ICC profile, at most some hundred
    /// KB more); a larger one, which could only be an `idat` full of image
    /// data, keeps its thumbnails unused rather than costing a copy the
    /// memory estimate does not count.
    static let largestMeta = 1 << 20
}

extension ISOBMFFMeta {
    /// The primary image's thumbnails that a decode could use in its place:
    /// an item with a `thmb` reference to the primary alone; a coded image,
    /// or a grid of at most `ISOBMFFThumbnail.largestGrid` coded tiles (the
    /// grid's shape is checked with every other grid's, `ISOBMFFGrid.check`);
    /// coded as `coding` says, with its alpha plane, so the library that
    /// decodes the primary decodes it too (libheif only HEVC, libavif only
    /// AV1); with a size (`ispe`, or a grid's own) and no `clap` (whose
    /// rounding the walk would have to repeat); an alpha plane, if any, of
    /// its own size and shape. Anything else in a `thmb` is left to the
    /// libraries, which ignore it or refuse the file as before.
    func thumbnails(coding: ISOBMFFLayout.Coding?, file: UnsafeRawBufferPointer) -> [ISOBMFFThumbnail] {
        guard let primary = items.primary, let coding, coding != .other else { return [] }
        let accepted: Set<FourCC> = coding == .hevc ? [FourCC("hvc1"), FourCC("hev1")] : [FourCC("av01")]
        // Tiles of a coded image (0) or a small grid of accepted tiles; nil for anything else.
        func tiles(_ item: UInt32) -> Int? {
            let type = items.type(of: item)
            if accepted.contains(type) { return 0 }
            guard type == FourCC("grid") else { return nil }
            let inputs = references.targets(FourCC("dimg"), from: item)
            guard (1...ISOBMFFThumbnail.largestGrid).contains(inputs.count),
                  inputs.allSatisfy({ accepted.contains(items.type(of: $0)) }) else { return nil }
            return inputs.count
        }
        func imageSize(_ item: UInt32) -> (width: UInt32, height: UInt32)? {
            if let ispe = properties.size(of: item) { return ispe }
            guard items.type(of: item) == FourCC("grid"),
                  let payload = locations.prefix(of: item, count: 12, file: file, idat: idat),
                  let grid = try? ISOBMFFGrid(payload: payload, item: item) else { return nil }
            return (grid.width, grid.height)
        }
        var found: [ISOBMFFThumbnail] = []
        for reference in references.all where reference.type == FourCC("thmb") && reference.to == [primary] {
            let item = reference.from
            guard item != primary, let ownTiles = tiles(item), !properties.has(FourCC("clap"), item),
                  let size = imageSize(item), size.width > 0, size.height > 0 else { continue }
            // As for the primary (layout): auxC on the alpha item or, for a grid, on its tiles.
            let alphas = references.all.filter { alpha in
                let tile = references.targets(FourCC("dimg"), from: alpha.from).first
                return alpha.type == FourCC("auxl") && alpha.to.contains(item)
                    && (properties.isAlpha(alpha.from) || tile.map(properties.isAlpha) == true)
            }
            guard alphas.count <= 1 else { continue }
            var alphaTiles = 0
            if let alpha = alphas.first {
                guard let count = tiles(alpha.from), let alphaSize = imageSize(alpha.from), alphaSize == size else { continue }
                alphaTiles = count
            }
            let turned = properties.quarterTurns(of: item) % 2 == 1
            found.append(ISOBMFFThumbnail(item: item, width: Int(turned ? size.height : size.width),
                                          height: Int(turned ? size.width : size.height), hasAlpha: !alphas.isEmpty,
                                          tiles: ownTiles + alphaTiles, referenceTypeOffset: reference.typeOffset))
        }
        return found
    }

    /// The rewrite `ISOBMFFPrimarySwap` describes, for a `meta` box at `box`.
    func primarySwap(meta box: ISOBMFFBox) -> ISOBMFFPrimarySwap? {
        guard let field = items.primaryField else { return nil }
        return ISOBMFFPrimarySwap(meta: box.start..<box.payload.upperBound, primaryIDOffset: field.offset,
                                  primaryIDSize: field.size)
    }
}
