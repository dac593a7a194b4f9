/// The counts no real AVIF or HEIC file reaches (SourcesAndLimits.md §
/// Structure limits). Each is far above what phones, cameras, editors and
/// encoders write, and each bounds something a library does per unit in
/// more than linear time or memory, in a call thumbd cannot interrupt.
enum ISOBMFFLimits {
    /// Boxes at every level the walk descends (top level, meta and its
    /// children, moov's tree). libheif allocates an object per box it reads;
    /// a 50 MB file could otherwise hold six million 8-byte boxes. Real
    /// files: tens to a few hundred (a 48 MP iPhone HEIC, ~400).
    static let boxes = 16_384
    /// Depth of the box trees the walk descends (moov's: moov, trak, mdia,
    /// minf, stbl, stsd, a sample entry: 7). The walk recurses, on a render
    /// worker's stack; libheif stops at 20 itself.
    static let nesting = 16
    /// Items (infe entries; also the entries of iloc and ipma). libheif
    /// finds items by linear look-ups (its parse is quadratic: 12 s for
    /// 19 881), libavif's ipma parser likewise and keeps ~1.2 KB per item.
    /// Real files: 1–5 for a plain image, 50–100 for a phone's grid with its
    /// thumbnail, Exif and auxiliary images, a few hundred at most.
    static let items = 2_048
    /// Properties in ipco. Real files share them: a few to a few dozen.
    static let properties = 4_096
    /// Properties one item lists in ipma (the field allows 255). Real items
    /// have 2–10 (codec configuration, ispe, colr, pixi, irot, imir, clap, auxC…).
    static let associationsPerItem = 64
    /// Associations over all items. libavif copies each property into each item it is associated with.
    static let associations = 16_384
    /// Item references (target IDs) over all iref boxes: a grid's tiles,
    /// thumbnails, auxiliary images, metadata. Real files: about one per item.
    static let references = 8_192
    /// Extents of one item: libheif's own limit. Encoders write one; with
    /// zero-sized offset and length fields an extent costs the file no bytes
    /// at all, so only a count bounds what libavif allocates for them.
    static let extentsPerItem = 32
    /// Extents over all items.
    static let extents = 8_192
    /// Tiles of one grid (also inputs of one overlay). Phones write 48–80
    /// tiles of 512×512; a 50 MP image in 256-px tiles is ~760, a 200 MP one
    /// in 512-px tiles ~770. Every tile is a decoder set up and torn down in
    /// one uninterruptible libheif call, or a dav1d decoder libavif keeps.
    static let gridTiles = 1_024
    /// A grid with more than one tile on a side needs tiles at least this
    /// wide (or high) on it (MIAF, ISO/IEC 23000-22 § 7.3.11.4.2; libavif
    /// checks it only after decoding every tile).
    static let minimumTileSide = 64
}
