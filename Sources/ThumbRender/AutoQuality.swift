import ThumbCodec
import ThumbImaging

/// `q=auto` (SPEC §17, Quality.md § Automatic quality): for one source and one lossy
/// format, the lowest `q` whose SSIMULACRA2 score on the source's canonical
/// 512-px rendition reaches `output.autoQualityTarget`, or 100 when none does.
/// The search runs inside the render job that first needs it (in the
/// sandboxed worker, under that render's admission and deadline); its
/// result is kept with the original's facts.
public enum AutoQuality {
    /// The version of the calibration table that maps thumbd's `q` to each
    /// format's encoder settings (`QualityScale`): a stored `q` found under
    /// another version was searched on another scale and is searched again.
    public static let qualityTableVersion = QualityScale.tableVersion

    /// `ThumbnailVariant.quality`'s spelling of `q=auto` until the search
    /// (or a stored result) resolves it: never a `q` any encoder sees.
    public static let unresolved = 0

    /// The long side of the canonical rendition the search scores.
    public static let canonicalSide = 512

    /// `output.autoQualityTarget`'s range and default.
    public static let targetRange = 30...95
    public static let defaultTarget = 80

    /// A search's outcome, kept with the original's facts.
    public struct Choice: Equatable, Sendable, Codable {
        /// The resolved format (`jpeg`, `webp`, `avif` or `jxl`).
        public var format: OutputFormat
        public var target: Int
        /// `qualityTableVersion` of the search.
        public var table: Int
        public var q: Int

        public init(format: OutputFormat, target: Int, table: Int = AutoQuality.qualityTableVersion, q: Int) {
            self.format = format
            self.target = target
            self.table = table
            self.q = q
        }
    }

    /// What one search did: its choice and its cost (ThumbBench, Quality.md).
    public struct Search: Sendable {
        public var q: Int
        /// Encodes (each decoded again and scored once): one per `q` tried.
        public var encodes: Int
        /// SSIMULACRA2 evaluations; fewer than `encodes` only for an image
        /// under 8 px on a side, which is not scored.
        public var scores: Int
    }

    /// The canonical rendition: the first frame at the smallest
    /// shrink-on-load scale whose long side is ≥ 512 px (the whole image
    /// when smaller), oriented, in sRGB, scaled by thumbd's own scaler to
    /// ≤ 512 px on its long side. Never from an embedded thumbnail.
    public static func canonicalRendition(source: [UInt8], header: ImageHeader,
                                          deadline: RenderDeadline = .none) throws(RenderError) -> Bitmap {
        var renderer = ThumbnailRenderer(geometry: canonicalGeometry(header), orientation: header.orientation)
        do {
            try ImageDecoder.decode(source, header: header, minimumDisplayedSize: canonicalMinimum(header),
                                    deadline: deadline, into: &renderer)
        } catch {
            throw RenderError(error)
        }
        let bitmap = renderer.finish()
        if deadline.hasPassed { throw .renderTimedOut }
        return bitmap
    }

    static func canonicalMinimum(_ header: ImageHeader) -> (width: Int, height: Int) {
        header.displayedWidth >= header.displayedHeight ? (canonicalSide, 1) : (1, canonicalSide)
    }

    static func canonicalGeometry(_ header: ImageHeader) -> ThumbnailGeometry {
        do {
            return try ThumbnailGeometry(sourceWidth: header.displayedWidth, sourceHeight: header.displayedHeight,
                                         width: canonicalSide, height: canonicalSide, fit: .inside, enlarge: false)
        } catch {
            preconditionFailure("inside with both sides always lays out: \(error)")
        }
    }

    /// Bytes a search holds at its peak, beside the render it runs in: the
    /// canonical decode (the original's bytes, the decoder's estimate at the
    /// canonical scale, the scaler's floats), then the rendition and its
    /// flattened copy, one encoded and decoded candidate, SSIMULACRA2's 18
    /// float planes, and `encoderAllowance` for an encoder's own state.
    public static func searchMemory(header: ImageHeader, sourceBytes: Int) -> Int {
        let minimum = canonicalMinimum(header)
        let decoded = ImageDecoder.decodedSize(header: header, minimumDisplayedSize: minimum)
        let geometry = canonicalGeometry(header)
        let renderer = ThumbnailRenderer(geometry: geometry, orientation: header.orientation)
        let decode = sourceBytes + ImageDecoder.estimatedDecodeMemory(header: header, minimumDisplayedSize: minimum)
            + renderer.peakBytes(decodedWidth: decoded.width, decodedHeight: decoded.height)
        let pixels = geometry.width * geometry.height
        return decode + pixels * (4 * 4 + 18 * 4) + encoderAllowance
    }

    /// What libaom, libwebp, libjpeg and libjxl allocate for a ≤ 512-px
    /// image besides its pixels (measured peaks stay under half of it).
    public static let encoderAllowance = 48 << 20

    /// The first `q` tried for `target`: the lowest whose mean score over the
    /// calibration corpus reaches it (`QualityScale.meanScores`, JPEG's, which
    /// the calibration gives every format), or 100.
    static func prior(target: Int) -> Int { lowest(reaching: Double(target)) }

    /// The mean score over the calibration corpus at `q`: the axis the search
    /// predicts along (an image's scores run roughly parallel to it).
    static func mean(_ q: Int) -> Double { QualityScale.meanScores[q - 1] }

    /// The lowest `q` whose mean score reaches `value`, or 100.
    static func lowest(reaching value: Double) -> Int {
        (QualityScale.meanScores.firstIndex { $0 >= value } ?? 99) + 1
    }

    /// The lowest `q` in 1…100 whose score reaches `target`, or 100.
    ///
    /// Like the bisection of SPEC §17, it keeps a bracket — `low` fails
    /// (0 before any `q` did), `high` passes (101 before any did) — and
    /// assumes scores rise with `q`; it ends when the two are adjacent, so
    /// the answer's score reaches the target and the `q` below it (when
    /// ≥ 1) was seen not to. Where plain bisection would try 7 `q`s, each
    /// probe is placed where the scores so far predict the target, measured
    /// along the corpus' mean score `mean(q)` rather than `q` itself: the
    /// scale is calibrated so that every format's mean follows it, and one
    /// image's scores run roughly parallel to it, steep where it is steep
    /// and flat where it is flat. The first probe is `prior(target)`; the
    /// next assumes the image's curve is the mean's shifted by what the
    /// first probe measured (a slope of 1 along `mean`); later ones take the
    /// secant through the last two probes. Each prediction is the lowest `q`
    /// whose `mean` reaches the predicted value, one step from the last
    /// probe at least, clamped inside the bracket. Whenever two probes in a
    /// row failed to halve a bracket wider than 4, the next is its midpoint,
    /// so it never needs more than about twice bisection's probes
    /// (Quality.md § What a search costs).
    ///
    /// Deterministic: the same rendition gives the same `q` on every
    /// instance. The encoders are deterministic, SSIMULACRA2 fixes its
    /// evaluation order, and the arithmetic here is Double in a fixed
    /// order with explicit rounding; Swift never contracts `a * b + c` into
    /// a fused multiply-add (LLVM's fp-contract is off for Swift), so no
    /// machine rounds differently.
    public static func search(_ rendition: Bitmap, format: OutputFormat, target: Int, background: RGBAColor?,
                              deadline: RenderDeadline = .none) throws(RenderError) -> Search {
        precondition(format != .auto && format.usesQuality, "search a lossy format")
        // The metric needs 8×8 pixels: a smaller image is not scored and takes the best q.
        guard rendition.width >= 8 && rendition.height >= 8 else { return Search(q: 100, encodes: 0, scores: 0) }
        // A JPEG answer is judged against the rendition flattened as it is.
        let reference = format == .jpeg ? rendition.flattened(onto: background ?? .white) : rendition
        let goal = Double(target)
        var low = 0, high = 101
        var encodes = 0
        var last: (q: Int, score: Double)?
        var next = prior(target: target)
        // Score points per point of `mean`: parallel until two probes say otherwise.
        var slope = 1.0
        // The bracket's width one and two probes ago (wider than any at first: never "slow").
        var widths = (Int.max / 4, Int.max / 4)
        while high - low > 1 {
            let q = min(high - 1, max(low + 1, next))
            let score = try self.score(reference, format: format, quality: q, background: background,
                                       deadline: deadline)
            encodes += 1
            if let last, mean(q) != mean(last.q) {
                // The local slope, kept within reason; a flat step (one encoder setting for
                // several q) or a dip keeps the one before.
                let secant = (score - last.score) / (mean(q) - mean(last.q))
                if secant > 0 { slope = min(5, max(0.2, secant)) }
            }
            last = (q, score)
            if score >= goal { high = q } else { low = q }
            let width = high - low
            if width <= 1 { break }
            // Bisection's guarantee: two probes that did not halve the bracket are followed by its midpoint.
            let slow = width > 4 && width * 2 > widths.1
            widths = (width, widths.0)
            next = slow ? low + width / 2 : predict(goal: goal, from: (q, score), slope: slope)
        }
        return Search(q: high == 101 ? 100 : high, encodes: encodes, scores: encodes)
    }

    /// The lowest `q` the line through `point` with `slope` (score points per
    /// point of `mean`) predicts to reach `goal`, one step from `point` at least.
    static func predict(goal: Double, from point: (q: Int, score: Double), slope: Double) -> Int {
        let target = mean(point.q) + (goal - point.score) / slope
        guard target.isFinite else { return point.q }
        let q = lowest(reaching: target)
        return point.score < goal ? max(q, min(100, point.q + 1)) : min(q, max(1, point.q - 1))
    }

    /// `rendition` encoded at `quality`, decoded by thumbd, and scored against it.
    static func score(_ reference: Bitmap, format: OutputFormat, quality: Int, background: RGBAColor?,
                      deadline: RenderDeadline) throws(RenderError) -> Double {
        let encoded = try ThumbnailPipeline.encode(reference, format: format, quality: quality,
                                                   background: background, deadline: deadline)
        let decoded: Bitmap
        do {
            decoded = try ImageDecoder.decodeBitmap(encoded.bytes, maxPixels: reference.width * reference.height,
                                                    allowJPEGXL: true, deadline: deadline).bitmap
        } catch .deadlineExceeded {
            throw .renderTimedOut
        } catch {
            throw .internalError("decoding thumbd's own \(format.rawValue) failed: \(error)")
        }
        if deadline.hasPassed { throw .renderTimedOut }
        do {
            return try SSIMULACRA2.score(reference: reference, distorted: decoded)
        } catch {
            throw .internalError("scoring the \(format.rawValue) candidate failed: \(error)")
        }
    }
}

extension RenderPlan {
    /// `estimatedMemory`, plus a `q=auto` search's when the render runs one
    /// (counted whole beside the render: the search starts once its bitmap exists).
    public func estimatedMemory(searching: Bool) -> Int {
        estimatedMemory + (searching ? AutoQuality.searchMemory(header: header, sourceBytes: sourceBytes) : 0)
    }
}

extension AutoQuality {
    /// The `q` `choices` hold for `format` at `target` on this release's table; nil when it must be searched.
    public static func q(in choices: [Choice], format: OutputFormat, target: Int) -> Int? {
        choices.first { $0.format == format && $0.target == target && $0.table == qualityTableVersion }?.q
    }

    /// `old` with `new` in: one choice per format, the newer one kept, in `OutputFormat` order
    /// (a writer merges what it read with its own, SPEC §17).
    public static func merged(_ old: [Choice], _ new: [Choice]) -> [Choice] {
        var byFormat: [OutputFormat: Choice] = [:]
        for choice in old + new { byFormat[choice.format] = choice }
        return OutputFormat.allCases.compactMap { byFormat[$0] }
    }
}
