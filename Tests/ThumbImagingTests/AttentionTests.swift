import Foundation
import Testing
@testable import ThumbImaging

/// `gravity=attention` on synthetic scenes: one subject — a face-toned disc,
/// an edgy patch, a saturated object — on a flat or smoothly graded
/// background, anywhere in the frame, corners included.
@Suite struct AttentionTests {
    /// A subject drawn into a scene: its centre and half-size in pixels.
    struct Subject: CustomStringConvertible {
        enum Kind: String, CaseIterable { case skin, checker, red, green, blue }
        var kind: Kind
        var cx: Int, cy: Int
        var radius = 20
        var description: String { "\(kind.rawValue) at \(cx),\(cy)" }

        /// Colour at (x, y), or nil outside the subject.
        func colour(_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8)? {
            let dx = x - cx, dy = y - cy
            switch kind {
            case .checker:
                guard abs(dx) < radius, abs(dy) < radius else { return nil }
                // 10-px squares: edges at the scale of the map's cells.
                let v: UInt8 = ((dx + radius) / 10 + (dy + radius) / 10) % 2 == 0 ? 0 : 255
                return (v, v, v)
            default:
                guard dx * dx + dy * dy <= radius * radius else { return nil }
                switch kind {
                case .skin: return (224, 172, 140)
                case .red: return (220, 30, 30)
                case .green: return (40, 200, 40)
                default: return (40, 70, 230)
                }
            }
        }
    }

    enum Background: CaseIterable { case flat, gradient }

    static func scene(width: Int, height: Int, background: Background, subject: Subject?) -> Bitmap {
        var image = Bitmap(width: width, height: height)
        for y in 0..<height {
            // A vertical ramp from dark to light grey: smooth, so no edges of its own.
            let grey = background == .flat ? UInt8(128) : UInt8(60 + 140 * y / (height - 1))
            for x in 0..<width {
                let (r, g, b) = subject?.colour(x, y) ?? (grey, grey, grey)
                let o = (y * width + x) * 4
                image.pixels[o] = r; image.pixels[o + 1] = g; image.pixels[o + 2] = b; image.pixels[o + 3] = 255
            }
        }
        return image
    }

    /// The window `fp` places (API.md § Composition): clamp(round(X·W − w/2), 0, W − w).
    static func window(_ focus: FocalPoint, width: Int, height: Int, side: Int) -> (x: Int, y: Int) {
        func place(_ thousandths: Int, _ full: Int) -> Int {
            let centre = (Double(thousandths) / 1000 * Double(full) - Double(side) / 2).rounded(.toNearestOrAwayFromZero)
            return min(max(Int(centre), 0), full - side)
        }
        return (place(focus.x, width), place(focus.y, height))
    }

    static let positions: [(Double, Double)] = [
        (0.5, 0.5), (0.2, 0.3), (0.8, 0.7), (0.3, 0.8), (0.75, 0.25),
        (0.09, 0.12), (0.92, 0.12), (0.08, 0.88), (0.92, 0.9),
    ]

    /// The square window of the short side (a square thumbnail's crop) placed
    /// on the focus holds the whole subject, and the focus lies on the
    /// subject (within one cell of the map, 8 px, of its edge).
    @Test(arguments: [(256, 170), (170, 256), (256, 256)])
    func subjectIsFoundAnywhere(size: (Int, Int)) {
        let (width, height) = size
        let side = min(width, height)
        for background in Background.allCases {
            for kind in Subject.Kind.allCases {
                for (fx, fy) in Self.positions {
                    let subject = Subject(kind: kind, cx: Int(fx * Double(width)), cy: Int(fy * Double(height)))
                    let image = Self.scene(width: width, height: height, background: background, subject: subject)
                    let focus = Attention.focus(of: image)
                    let px = Double(focus.x) / 1000 * Double(width), py = Double(focus.y) / 1000 * Double(height)
                    let miss = ((px - Double(subject.cx)) * (px - Double(subject.cx))
                        + (py - Double(subject.cy)) * (py - Double(subject.cy))).squareRoot()
                    #expect(miss <= Double(subject.radius + 8), "\(subject) on \(background) \(width)×\(height): focus \(focus.description)")
                    let w = Self.window(focus, width: width, height: height, side: side)
                    let r = subject.radius
                    let inside = w.x <= max(subject.cx - r, 0) && min(subject.cx + r, width) <= w.x + side
                        && w.y <= max(subject.cy - r, 0) && min(subject.cy + r, height) <= w.y + side
                    #expect(inside, "\(subject) on \(background) \(width)×\(height): window \(w)")
                }
            }
        }
    }

    /// Two subjects: the face-toned disc outweighs a grey one of the same
    /// brightness contrast (skin tones count, not only edges).
    @Test func skinOutweighsNeutral() {
        var image = Self.scene(width: 256, height: 170, background: .flat, subject: nil)
        for y in 0..<170 {
            for x in 0..<256 {
                let o = (y * 256 + x) * 4
                let l = (x - 60) * (x - 60) + (y - 85) * (y - 85), r = (x - 196) * (x - 196) + (y - 85) * (y - 85)
                // Left: neutral grey with the skin colour's luminance (sRGB 184); right: skin.
                let colour: [UInt8]? = l <= 400 ? [184, 184, 184] : r <= 400 ? [224, 172, 140] : nil
                if let colour { image.pixels.replaceSubrange(o..<(o + 3), with: colour) }
            }
        }
        let focus = Attention.focus(of: image)
        #expect(focus.x > 600, "\(focus.description)")
    }

    /// Featureless images have no focus: the centre, exactly.
    @Test func flatImagesGiveTheCentre() {
        for rgba: [UInt8] in [[128, 128, 128, 255], [255, 0, 0, 255], [0, 0, 0, 255], [255, 255, 255, 255], [10, 200, 90, 77]] {
            for (w, h) in [(256, 170), (170, 256), (1, 1), (3, 2), (256, 1)] {
                let image = Bitmap(width: w, height: h, pixels: Array(repeating: rgba, count: w * h).flatMap { $0 })
                #expect(Attention.focus(of: image) == FocalPoint(x: 500, y: 500), "\(rgba) \(w)×\(h)")
            }
        }
    }

    /// Colour under alpha 0 is not there: a fully transparent image whose RGB
    /// holds a vivid subject gives the centre.
    @Test func fullyTransparentImageGivesTheCentre() {
        var image = Self.scene(width: 256, height: 170, background: .gradient,
                               subject: Subject(kind: .red, cx: 40, cy: 40))
        for i in stride(from: 3, to: image.pixels.count, by: 4) { image.pixels[i] = 0 }
        #expect(Attention.focus(of: image) == FocalPoint(x: 500, y: 500))
        #expect(Attention.focus(of: Bitmap(width: 256, height: 256)) == FocalPoint(x: 500, y: 500))
    }

    /// A transparent region never attracts, whatever colour its pixels hold:
    /// vivid discs under alpha 0 on the right, a faint one opaque on the left.
    @Test func transparentPixelsDoNotAttract() {
        var image = Self.scene(width: 256, height: 170, background: .flat, subject: nil)
        for y in 0..<170 {
            for x in 0..<256 {
                let o = (y * 256 + x) * 4
                if x >= 128 {
                    let vivid = Subject(kind: x < 192 ? .checker : .red, cx: x < 192 ? 160 : 224, cy: 85).colour(x, y)
                    let (r, g, b) = vivid ?? (255, 0, 255)
                    image.pixels.replaceSubrange(o..<(o + 4), with: [r, g, b, 0])
                } else if (x - 50) * (x - 50) + (y - 120) * (y - 120) <= 225 {
                    image.pixels.replaceSubrange(o..<(o + 3), with: [150, 140, 130])
                }
            }
        }
        let focus = Attention.focus(of: image)
        #expect(focus.x < 500, "\(focus.description)")
        let px = Double(focus.x) / 1000 * 256, py = Double(focus.y) / 1000 * 170
        #expect(abs(px - 50) <= 23 && abs(py - 120) <= 23, "\(focus.description)")
    }

    /// Half-transparent content counts half: the same disc twice, one at
    /// alpha 255 and one at alpha 60, on a transparent canvas.
    @Test func coverageWeighsTheScore() {
        var image = Bitmap(width: 256, height: 170)
        for y in 0..<170 {
            for x in 0..<256 {
                let o = (y * 256 + x) * 4
                let left = (x - 60) * (x - 60) + (y - 85) * (y - 85) <= 400
                let right = (x - 196) * (x - 196) + (y - 85) * (y - 85) <= 400
                if left || right { image.pixels.replaceSubrange(o..<(o + 4), with: [224, 172, 140, left ? 60 : 255]) }
            }
        }
        #expect(Attention.focus(of: image).x > 600)
    }

    /// The same bytes give the same point, and this point: the pinned value
    /// guards against anything machine-dependent creeping in.
    @Test func deterministicAndPinned() {
        let image = Self.scene(width: 256, height: 170, background: .gradient,
                               subject: Subject(kind: .skin, cx: 70, cy: 50))
        let focus = Attention.focus(of: image)
        #expect(Attention.focus(of: image) == focus)
        #expect(focus == FocalPoint(x: 275, y: 294), "\(focus.description)")
    }

    @Test func gridCellsAreSquare() {
        #expect(Saliency.gridSize(width: 256, height: 170, longSide: 32) == (32, 21))
        #expect(Saliency.gridSize(width: 170, height: 256, longSide: 32) == (21, 32))
        #expect(Saliency.gridSize(width: 256, height: 256, longSide: 32) == (32, 32))
        #expect(Saliency.gridSize(width: 10, height: 7, longSide: 32) == (10, 7))
        #expect(Saliency.gridSize(width: 256, height: 1, longSide: 32) == (32, 1))
        #expect(Saliency.gridSize(width: 256, height: 3, longSide: 32) == (32, 1))
        #expect(Saliency.gridSize(width: 2, height: 256, longSide: 32) == (1, 32))
    }

    /// Every pixel lands in exactly one cell, and the counts add up.
    @Test func cellsPartitionThePixels() {
        for (side, cells) in [(256, 32), (170, 21), (7, 7), (33, 32), (1000, 32)] {
            let counts = (0..<cells).map { Saliency.pixels(inCell: $0, of: cells, across: side) }
            #expect(counts.reduce(0, +) == side)
            for c in 0..<cells { #expect(counts[c] == (0..<side).filter { $0 * cells / side == c }.count) }
        }
    }

    /// The hand-rolled cube root matches the C library's over Lab's range.
    @Test func cubeRootIsAccurate() {
        var t = 216.0 / 24389.0
        while t <= 2 {
            #expect(abs(Saliency.cubeRoot(t) - cbrt(t)) <= 1e-15, "\(t)")
            t *= 1.01
        }
    }

    /// libvips' weights on known colours: the skin score of skin beats grey,
    /// and chroma rates saturated colours far above neutral ones.
    @Test func colourScores() {
        func score(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> Double {
            let lut = SRGB.toLinear16
            return Saliency.colourScore(SIMD3(Double(lut[Int(r)]), Double(lut[Int(g)]), Double(lut[Int(b)])) / 65535)
        }
        let grey = score(128, 128, 128), skin = score(224, 172, 140)
        #expect(abs(grey - 70.09) < 0.01, "\(grey)")   // a neutral's skin score alone: chroma 0
        #expect(abs(skin - 114.90) < 0.01, "\(skin)")
        for vivid in [score(220, 30, 30), score(40, 200, 40), score(40, 70, 230)] { #expect(vivid > grey + 35, "\(vivid)") }
        #expect(score(10, 10, 10) == 0)   // dark: Y ≤ 5 counts nothing
    }
}
