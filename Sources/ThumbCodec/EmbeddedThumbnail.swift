/// Which embedded thumbnail a render of an AVIF or HEIC image decodes instead
/// of its primary image (API.md § Formats read, "Embedded thumbnails").
///
/// Why: a phone's 12 MP HEIC costs 1.0–1.5 s of CPU to decode whatever the
/// result's size, and most carry a thumbnail item a few hundred pixels wide
/// that covers a list's 256-px render for a hundredth of that. This is the
/// AVIF/HEIC counterpart of a JPEG's DCT scaling: the smallest decode that
/// still covers the pre-crop result size (`minimumDisplayedSize`).
extension ImageDecoder {
    /// The thumbnail item a decode for `minimumDisplayedSize` uses, or nil for
    /// the primary image. A thumbnail qualifies when, after its own `irot`:
    /// - it covers `minimumDisplayedSize` on both axes;
    /// - it is no larger than the primary on either axis and has at most a
    ///   quarter of its pixels (a "thumbnail" larger than its image is not
    ///   one; real ones have a few percent, and one as large as this saves
    ///   little). So its decode costs at most what the memory estimate
    ///   counts for the primary's (`estimatedDecodeMemory`);
    /// - its aspect is the primary's up to the rounding of a whole-image
    ///   scaling: its short side less than two pixels from the primary's
    ///   scaled to its long side, |tw·ph − th·pw| < 2·max(pw, ph). Encoders
    ///   scale the whole picture into the thumbnail and round each side
    ///   (libheif down, then down to even: 4224×3168 gives 320×240, but
    ///   320×214 gives 80×52 for 53.5), and the renderer maps the whole
    ///   thumbnail onto the whole scaled image, so the result's geometry,
    ///   computed from the primary, is the same. A thumbnail further off is
    ///   a crop or another picture;
    /// - it has alpha exactly when the primary has (an opaque thumbnail of a
    ///   translucent image would lose its transparency, and the header, the
    ///   result's format negotiation and the memory estimate all follow the
    ///   primary's alpha).
    /// The smallest qualifying one (fewest pixels, the first in the file among
    /// equals) is chosen. Sizes come from the structure walk (`ispe`, `irot`),
    /// and the decoder checks the decoded size against them.
    static func embeddedThumbnail(header: ImageHeader,
                                  minimumDisplayedSize: (width: Int, height: Int)?) -> ISOBMFFThumbnail? {
        guard let need = minimumDisplayedSize, header.format == .avif || header.format == .heic,
              let layout = header.isobmff, !layout.thumbnails.isEmpty else { return nil }
        // HEIF orientation is always 1 (irot/imir are applied): displayed = stored.
        let (pw, ph) = (header.width, header.height)
        var best: ISOBMFFThumbnail?
        for t in layout.thumbnails {
            guard t.width >= need.width, t.height >= need.height, t.width <= pw, t.height <= ph,
                  t.width * t.height <= pw * ph / 4, abs(t.width * ph - t.height * pw) < 2 * max(pw, ph),
                  t.hasAlpha == header.hasAlpha else { continue }
            if let chosen = best, chosen.width * chosen.height <= t.width * t.height { continue }
            best = t
        }
        return best
    }

    /// True when a decode of `header` for `minimumDisplayedSize` with
    /// `useEmbeddedThumbnail` decodes a thumbnail item: such a render cannot
    /// share its decode with the canonical one, which is always of the primary.
    public static func usesEmbeddedThumbnail(header: ImageHeader,
                                             minimumDisplayedSize: (width: Int, height: Int)?) -> Bool {
        embeddedThumbnail(header: header, minimumDisplayedSize: minimumDisplayedSize) != nil
    }
}
