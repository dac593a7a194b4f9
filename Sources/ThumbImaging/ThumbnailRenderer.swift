/// Turns streamed source rows into the finished thumbnail of a
/// `ThumbnailGeometry`: box-reduces on the fly while rows arrive (so a huge
/// source never exists whole), then resamples the small remainder with
/// Lanczos-3, all in linear light with premultiplied alpha, blurs and
/// sharpens there (API.md § Composition), then applies the EXIF orientation,
/// the crop and `contain`'s canvas. A source colour space other than sRGB is
/// linearised with its own curves and converted to sRGB primaries on the
/// small result (see `SourceColorSpace`).
///
/// The decoded size it is fed may be smaller than the original (JPEG DCT
/// scaling); it scales from whatever `begin` announces.
public struct ThumbnailRenderer: ScanlineSink {
    /// Settable until `finish`: an `attention` window is placed once the
    /// focus is known, which may be after the rows arrived (`place(onFocus:)`).
    public private(set) var geometry: ThumbnailGeometry
    public let orientation: Orientation
    /// Gaussian blur sigma in result pixels, then unsharp-mask sigma.
    public let blurSigma: Float?
    public let sharpenSigma: Float?
    /// `contain`'s padding; nil is transparent.
    public let background: RGBAColor?
    private var reducer: BoxReducer?
    /// Instead of `reducer` when there is no box step (`streamsResampling`).
    private var streaming: StreamingResampler?
    private var color = SourceColorSpace.sRGB

    public init(geometry: ThumbnailGeometry, orientation: Orientation, blurSigma: Float? = nil,
                sharpenSigma: Float? = nil, background: RGBAColor? = nil) {
        self.geometry = geometry
        self.orientation = orientation
        self.blurSigma = blurSigma
        self.sharpenSigma = sharpenSigma
        self.background = background
    }

    /// Places an `attention` window on the original's focus (no-op for any other geometry).
    public mutating func place(onFocus focus: FocalPoint) {
        if geometry.needsFocus { geometry = geometry.placed(onFocus: focus) }
    }

    /// The scaled size in stored (pre-orientation) axes.
    private var storedTarget: (width: Int, height: Int) {
        orientation.swapsAxes ? (geometry.scaledHeight, geometry.scaledWidth)
            : (geometry.scaledWidth, geometry.scaledHeight)
    }

    public mutating func begin(width: Int, height: Int, color: SourceColorSpace) {
        self.color = color
        reducer = nil
        streaming = nil
        if streamsResampling(width: width, height: height) {
            let target = storedTarget
            streaming = StreamingResampler(sourceWidth: width, sourceHeight: height, width: target.width,
                                           height: target.height, toLinear16: color.toLinear16)
            return
        }
        let (kx, ky) = reduction(width: width, height: height)
        reducer = BoxReducer(sourceWidth: width, sourceHeight: height, kx: kx, ky: ky, toLinear16: color.toLinear16)
    }

    /// The whole factors a `width`×`height` decode is box-reduced by: while
    /// at least 2× headroom remains for the kernel (the box step is cheap,
    /// the kernel step decides the quality).
    func reduction(width: Int, height: Int) -> (kx: Int, ky: Int) {
        let target = storedTarget
        return (max(1, width / (target.width * 2)), max(1, height / (target.height * 2)))
    }

    /// True when a `width`×`height` decode has no box step on either axis and
    /// still needs resampling: the rows are then resampled as they arrive
    /// (`StreamingResampler`), so the decode never exists whole as floats.
    func streamsResampling(width: Int, height: Int) -> Bool {
        let target = storedTarget
        return reduction(width: width, height: height) == (1, 1) && (width != target.width || height != target.height)
    }

    /// Bytes a render of a `width`×`height` decode holds at its peak besides
    /// the decode's own buffers, for memory estimates (an animation renders
    /// one frame after another through it): the box-reduced floats, the
    /// resampler's horizontal pass and result (16 bytes a pixel each), the
    /// bytes of the scaled image, the filters' copy of the floats, and the
    /// crop, turn and canvas copies of the result.
    public func peakBytes(decodedWidth width: Int, decodedHeight height: Int) -> Int {
        let (kx, ky) = reduction(width: width, height: height)
        let reducedWidth = (width + kx - 1) / kx, reducedHeight = (height + ky - 1) / ky
        let target = storedTarget
        let scaled = target.width * target.height
        let filters = blurSigma != nil || sharpenSigma != nil ? scaled : 0
        let window = geometry.windowWidth * geometry.windowHeight, result = geometry.width * geometry.height
        let copies = (window != scaled ? 1 : 0) + (orientation == .up ? 0 : 1) + (result != window ? 1 : 0)
        if streamsResampling(width: width, height: height) {
            return (scaled + filters) * 16 + StreamingResampler.rowBytes(sourceWidth: width, width: target.width)
                + scaled * 4 + result * 4 * copies
        }
        // The resampler hands the reduced floats back as they are when they already have the
        // target's size: no horizontal pass and no second result then.
        let resamples = reducedWidth != target.width || reducedHeight != target.height
        let floats = reducedWidth * reducedHeight + (resamples ? target.width * reducedHeight + scaled : 0)
        return (floats + filters) * 16 + scaled * 4 + result * 4 * copies
    }

    /// True when this renderer would box-reduce a `width`×`height` decode
    /// exactly as `other` does: the reduced floats are then the same values,
    /// and `adoptReduction(from:)` can take them instead of making them again.
    /// A renderer that resamples as the rows arrive keeps no reduction to share.
    public func reducesLike(_ other: ThumbnailRenderer, width: Int, height: Int) -> Bool {
        reduction(width: width, height: height) == other.reduction(width: width, height: height)
            && !streamsResampling(width: width, height: height) && !other.streamsResampling(width: width, height: height)
    }

    /// Takes `other`'s finished reduction (the rows it was fed, reduced by
    /// the same factors this renderer uses): one decode, one reduction, two
    /// results. Copy-on-write shares the floats.
    public mutating func adoptReduction(from other: ThumbnailRenderer) {
        guard let shared = other.reducer, shared.isComplete,
              reduction(width: shared.sourceWidth, height: shared.sourceHeight) == (shared.kx, shared.ky) else {
            preconditionFailure("adoptReduction from a renderer that reduces otherwise or has not finished its rows")
        }
        reducer = shared
        color = other.color
    }

    public mutating func consume(_ rows: UnsafeRawBufferPointer, rowCount: Int) {
        if streaming != nil { return streaming!.consume(rows, rowCount: rowCount) }
        reducer!.consume(rows, rowCount: rowCount)
    }

    /// The finished thumbnail: `geometry.width`×`geometry.height`, straight alpha.
    public func finish() -> Bitmap {
        let target = storedTarget
        var resized: [SIMD4<Float>]
        if let streaming {
            guard streaming.isComplete else { preconditionFailure("finish() before every row arrived") }
            resized = streaming.output
        } else {
            guard let reducer, reducer.isComplete else { preconditionFailure("finish() before every row arrived") }
            resized = Resampler.resize(reducer.output, width: reducer.width, height: reducer.height,
                                       toWidth: target.width, toHeight: target.height)
        }
        // On the whole scaled image, before the crop, so a window's edges
        // see their real neighbours; in stored axes, which the Gaussian's
        // symmetry makes the same as after orienting.
        if let sigma = blurSigma {
            GaussianBlur.apply(&resized, width: target.width, height: target.height, sigma: sigma)
        }
        if let sigma = sharpenSigma {
            UnsharpMask.apply(&resized, width: target.width, height: target.height, sigma: sigma)
        }
        let stored = Self.quantise(resized, width: target.width, height: target.height, color: color)
        let window = stored.oriented(orientation)
            .cropped(x: geometry.cropX, y: geometry.cropY, width: geometry.windowWidth, height: geometry.windowHeight)
        guard window.width != geometry.width || window.height != geometry.height else { return window }
        return window.placed(onCanvasWidth: geometry.width, height: geometry.height,
                             x: geometry.imageX, y: geometry.imageY, background: background)
    }

    /// Whole-bitmap convenience: streams `bitmap` (in `color`) through a renderer.
    public static func render(_ bitmap: Bitmap, orientation: Orientation, geometry: ThumbnailGeometry,
                              color: SourceColorSpace = .sRGB) -> Bitmap {
        var renderer = ThumbnailRenderer(geometry: geometry, orientation: orientation)
        renderer.begin(width: bitmap.width, height: bitmap.height, color: color)
        bitmap.pixels.withUnsafeBytes { renderer.consume($0, rowCount: bitmap.height) }
        return renderer.finish()
    }

    /// Premultiplied linear floats in the source's primaries → straight-alpha
    /// sRGB bytes, clamped to the sRGB gamut.
    static func quantise(_ pixels: [SIMD4<Float>], width: Int, height: Int, color: SourceColorSpace) -> Bitmap {
        var out = [UInt8](repeating: 0, count: width * height * 4)
        let top = Float(SRGB.fromLinearSize - 1)
        SRGB.fromLinear.withUnsafeBufferPointer { lut in
            pixels.withUnsafeBufferPointer { src in
                out.withUnsafeMutableBufferPointer { dst in
                    for i in 0..<src.count {
                        let p = src[i]
                        let a = min(max(p.w, 0), 1)
                        let alpha = UInt8((a * 255).rounded())
                        // Fully transparent pixels carry no colour; 0,0,0,0 keeps PNGs small.
                        guard alpha > 0 else { continue }
                        let c = color.toSRGBPrimaries(SIMD4<Float>(p.x, p.y, p.z, 0) / a)
                            .clamped(lowerBound: .zero, upperBound: SIMD4(repeating: 1))
                        dst[i * 4] = lut[Int(c.x * top + 0.5)]
                        dst[i * 4 + 1] = lut[Int(c.y * top + 0.5)]
                        dst[i * 4 + 2] = lut[Int(c.z * top + 0.5)]
                        dst[i * 4 + 3] = alpha
                    }
                }
            }
        }
        return Bitmap(width: width, height: height, pixels: out)
    }
}
