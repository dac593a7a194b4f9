import CThumbCodec
import ThumbImaging

/// What a decode does about an embedded colour profile (API.md § Output "Colour").
///
/// A decoder session reads the profile bytes and the colour model they must
/// describe, and builds one of these with `init(profile:model:cmykInverted:)`.
/// `RowPump.run` then passes `sourceColorSpace` to the sink and runs
/// `.transform` over every batch of rows; CMYK JPEGs hand the transform to
/// the C decoder instead, which converts CMYK rows itself.
enum ColorHandling {
    /// No profile, or one that is ignored: the samples are sRGB.
    case sRGB
    /// A matrix/TRC profile (Display P3, Adobe RGB, ROMM, gray TRC): rows
    /// stream unchanged; the imaging layer linearises them with the
    /// profile's curves and converts the small result with its matrix.
    case linear(SourceColorSpace)
    /// Any other profile (LUT-based RGB or gray, every CMYK profile): lcms2
    /// converts the rows to sRGB as they stream, at full decoded size.
    case transform(ColorTransform)

    /// The colour model (`THUMBD_GRAY`, `THUMBD_RGB`, `THUMBD_CMYK`) is the
    /// one the pixels have; a profile of another colour space, an
    /// unparsable one or one over 4 MiB gives `.sRGB` (ignored, no error).
    init(profile: UnsafeRawBufferPointer, model: Int32, cmykInverted: Bool = false) {
        self = ColorHandling(usableProfile: profile, model: model, cmykInverted: cmykInverted) ?? .sRGB
    }

    /// Like `init(profile:model:cmykInverted:)`, but nil when there is no
    /// usable profile, so that a format with a second colour description
    /// (HEIF `nclx`) can fall back to it.
    init?(usableProfile profile: UnsafeRawBufferPointer, model: Int32, cmykInverted: Bool = false) {
        guard profile.count > 0, model != 0 else { return nil }
        var message = [CChar](repeating: 0, count: 256)
        guard let icc = thumbd_icc_open(profile.baseAddress, profile.count, model, cmykInverted ? 1 : 0,
                                        &message, message.count) else {
            return nil
        }
        guard thumbd_icc_kind(icc) == Int32(THUMBD_ICC_MATRIX_SHAPER) else {
            self = .transform(ColorTransform(icc))
            return
        }
        var curves = [Float](repeating: 0, count: 768)
        var matrix = [Float](repeating: 0, count: 9)
        thumbd_icc_matrix_shaper(icc, &curves, &matrix)
        thumbd_icc_close(icc)
        let space = SourceColorSpace(curves: curves, matrix: matrix)
        self = space.isSRGB ? .sRGB : .linear(space)
    }

    /// HEIF/AVIF `nclx` colour information: primaries other than BT.709 and
    /// non-sRGB transfers become a curves-and-matrix space; BT.709 with an
    /// sRGB-like transfer (and unknown codes) is `.sRGB`.
    init(nclx: thumbd_nclx) {
        var nclx = nclx
        var curves = [Float](repeating: 0, count: 768)
        var matrix = [Float](repeating: 0, count: 9)
        guard thumbd_nclx_matrix_shaper(&nclx, &curves, &matrix) != 0 else {
            self = .sRGB
            return
        }
        let space = SourceColorSpace(curves: curves, matrix: matrix)
        self = space.isSRGB ? .sRGB : .linear(space)
    }

    /// What the sink is told about the rows it receives.
    var sourceColorSpace: SourceColorSpace {
        if case .linear(let space) = self { return space }
        return .sRGB
    }
}

/// An lcms2 transform to sRGB owned by the C shim; closed when released.
final class ColorTransform {
    let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }

    deinit { thumbd_icc_close(handle) }

    /// Converts RGBA8 rows (gray as R = G = B) to sRGB in place; alpha kept.
    func convertRGBA(_ rows: UnsafeMutableRawBufferPointer) {
        thumbd_icc_convert_rgba(handle, rows.baseAddress, rows.count / 4)
    }
}
