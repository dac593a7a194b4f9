import Foundation

extension ThumbURLBuilder {
    /// Points × scale, rounded up, snapped up to the ladder (API.md § Geometry).
    /// An integer scale 1…4 sends points and `dpr`; any other scale sends pixels.
    public func resolve(_ spec: ThumbnailSpec) throws(ThumbClientError) -> Resolved {
        guard spec.scale.isFinite, spec.scale > 0 else { throw .invalidRequest("scale \(spec.scale) is not positive") }
        guard spec.width != nil || spec.height != nil else { throw .invalidRequest("give a width, a height or both") }
        for side in [spec.width, spec.height].compactMap({ $0 }) where !(side.isFinite && side > 0) {
            throw .invalidRequest("size \(side) is not positive")
        }
        let integerScale = (1...4).contains(spec.scale) && spec.scale.rounded() == spec.scale ? Int(spec.scale) : nil
        // Up to the pixel, forgiving the last bits of a product such as 33.333·3.
        func up(_ v: Double) -> Int { Int((v - 1e-9).rounded(.up)) }
        let pt = (w: spec.width.map(up), h: spec.height.map(up))
        let px = (w: spec.width.map { up($0 * spec.scale) }, h: spec.height.map { up($0 * spec.scale) })

        switch ladder {
        case .any:
            if let s = integerScale, s > 1, spec.width.map({ $0 == $0.rounded() }) ?? true,
               spec.height.map({ $0 == $0.rounded() }) ?? true {
                return Resolved(width: pt.w, height: pt.h, dpr: s, preset: nil)
            }
            return Resolved(width: px.w, height: px.h, dpr: nil, preset: nil)

        case .allowedSizes(let boxes):
            let named = boxes.map { (name: String?.none, box: $0) }
            return try pick(named, points: pt, pixels: px, scale: integerScale)

        case .presets(let presets):
            let named = presets.sorted { $0.key < $1.key }.map { (name: Optional($0.key), box: $0.value) }
            return try pick(named, points: pt, pixels: px, scale: integerScale)

        case .widths(let rungs):
            guard let wanted = px.w, let rung = Self.snap(wanted, to: rungs) else {
                return Resolved(width: px.w, height: px.h, dpr: nil, preset: nil)
            }
            // The height keeps the box's aspect ratio at the rung's width.
            let height = px.h.map { Int((Double($0) * Double(rung) / Double(wanted) - 1e-9).rounded(.up)) }
            if let s = integerScale, s > 1, rung % s == 0, height.map({ $0 % s == 0 }) ?? true {
                return Resolved(width: rung / s, height: height.map { $0 / s }, dpr: s, preset: nil)
            }
            return Resolved(width: rung, height: height, dpr: nil, preset: nil)
        }
    }

    /// The smallest box covering the size (in points with `dpr` for an integer
    /// scale, else in pixels), by area; the largest when none covers it.
    private func pick(_ boxes: [(name: String?, box: SizeLadder.Box)], points: (w: Int?, h: Int?),
                      pixels: (w: Int?, h: Int?), scale: Int?) throws(ThumbClientError) -> Resolved {
        guard !boxes.isEmpty else { throw .invalidRequest("the ladder has no sizes") }
        let need = scale == nil ? pixels : points
        let byArea = boxes.sorted { ($0.box.width * $0.box.height, $0.box.width) < ($1.box.width * $1.box.height, $1.box.width) }
        let chosen = byArea.first { $0.box.width >= (need.w ?? 0) && $0.box.height >= (need.h ?? 0) } ?? byArea.last!
        let dpr = scale.flatMap { $0 > 1 ? $0 : nil }
        return Resolved(width: chosen.box.width, height: chosen.box.height, dpr: dpr, preset: chosen.name)
    }

    /// The smallest rung ≥ `value`, else the largest; nil for no rungs.
    static func snap(_ value: Int, to rungs: [Int]) -> Int? {
        rungs.sorted().first { $0 >= value } ?? rungs.max()
    }
}
