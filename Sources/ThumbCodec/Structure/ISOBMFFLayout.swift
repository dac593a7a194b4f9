/// What the ISOBMFF walk learnt of an AVIF or HEIC file that the probe, the
/// decoder choice and the memory estimate need.
struct ISOBMFFLayout: Sendable, Equatable, Codable {
    enum Coding: Sendable, Equatable, Codable {
        /// Every coded image of the primary item (and its alpha) is AV1: libavif's.
        case av1
        /// Every one is HEVC: libheif's, the only files libheif sees, so its
        /// dav1d path (which leaks what dav1d refuses) never runs.
        case hevc
        /// Something else, or a mixture: libavif, which refuses what it cannot decode.
        case other
    }

    /// nil when the file names no primary item (an AVIF image sequence: libavif reads its track).
    let coding: Coding?
    /// Tiles of the primary image's grid plus those of its alpha plane's
    /// grid; 0 when neither is a grid. libavif holds a dav1d decoder and
    /// picture for each until the grid is assembled (`ImageDecoder.avifWorkingBytes`).
    let tiles: Int
    /// The primary image's thumbnails a decode could use instead
    /// (`ISOBMFFMeta.thumbnails`), in file order.
    var thumbnails: [ISOBMFFThumbnail] = []
    /// How libavif is made to decode one of them (AVIF only; nil for libheif's files).
    var primarySwap: ISOBMFFPrimarySwap?

    /// Whether libheif decodes the file (else libavif).
    var usesLibheif: Bool { coding == .hevc }
}
