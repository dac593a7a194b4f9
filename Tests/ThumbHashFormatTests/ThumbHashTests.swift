import Foundation
import Testing
@testable import ThumbHashFormat

/// `ThumbHash` against the reference JavaScript (evanw/thumbhash js/thumbhash.js at a652ce6,
/// run by node v20.20.2): `ThumbHashVectors.swift` holds its answers, made by
/// `Fixtures/make-thumbhash-vectors.mjs` (see Fixtures/README.md). Equality is exact: the
/// hash bytes, the decoded size and every decoded byte (by FNV-1a digest and samples), the
/// aspect ratio and average colour as doubles. The hashes whose bits hang on a cosine's last
/// bit (`cosineSensitive`) are held to less, in ThumbHashCosineSensitivityTests.
@Suite struct ThumbHashTests {
    @Test(arguments: ThumbHashVectors.encoded.filter { !$0.cosineSensitive })
    func encoderMatchesTheReferenceBitForBit(_ vector: ThumbHashVectors.Vector) throws {
        let recipe = try #require(vector.recipe)
        let hash = ThumbHash.encode(recipe.bitmap(width: vector.width, height: vector.height))
        #expect(Data(hash).base64EncodedString() == vector.hash, "\(recipe) \(vector.width)×\(vector.height)")
    }

    @Test(arguments: ThumbHashVectors.encoded + ThumbHashVectors.decodedOnly)
    func decoderMatchesTheReferencePixelForPixel(_ vector: ThumbHashVectors.Vector) throws {
        let hash = try #require(Data(base64Encoded: vector.hash)).map { $0 }
        let image = try #require(ThumbHash.decode(hash), "\(vector.hash) did not decode")
        #expect(image.width == vector.decodedWidth && image.height == vector.decodedHeight)
        #expect(image.rgba.count == image.width * image.height * 4)
        #expect(ThumbHashVectors.fnv1a(image.rgba) == vector.fnv1a, "\(vector.hash): decoded bytes differ")
        for sample in vector.samples {
            let o = (sample[1] * image.width + sample[0]) * 4
            #expect(image.rgba[o..<(o + 4)].map(Int.init) == Array(sample[2...]),
                    "\(vector.hash) at \(sample[0]),\(sample[1])")
        }
        #expect(ThumbHash.approximateAspectRatio(hash) == vector.aspect)
        let average = try #require(ThumbHash.averageRGBA(hash))
        #expect([average.r, average.g, average.b, average.a] == vector.average)
    }

    /// What the hash keeps of its input, within the format's precision: the aspect ratio (the
    /// short side's luminance count is round(L·short/long), at least 1, L = 7 or 5 with
    /// alpha), the alpha flag, and the average colour (6-bit L, P, Q: r = l + p/3 + q/2 is off
    /// by at most 1/126 + 1/189 + 1/126 < 0.022; 4-bit alpha by 1/30).
    @Test(arguments: ThumbHashVectors.encoded)
    func hashKeepsAspectAlphaAndAverage(_ vector: ThumbHashVectors.Vector) throws {
        let recipe = try #require(vector.recipe)
        let bitmap = recipe.bitmap(width: vector.width, height: vector.height)
        let hash = ThumbHash.encode(bitmap)
        let hasAlpha = !bitmap.isOpaque
        #expect((hash[2] & 0x80 != 0) == hasAlpha)

        let lCount = hasAlpha ? 5.0 : 7.0
        let ratio = try #require(ThumbHash.approximateAspectRatio(hash))
        let approxShortOverLong = min(ratio, 1 / ratio)
        let shortOverLong = Double(min(bitmap.width, bitmap.height)) / Double(max(bitmap.width, bitmap.height))
        let clampedToOne = approxShortOverLong == 1 / lCount && shortOverLong < 1.5 / lCount
        #expect(abs(approxShortOverLong - shortOverLong) <= 0.5 / lCount + 1e-12 || clampedToOne,
                "\(bitmap.width)×\(bitmap.height): ratio \(ratio)")
        #expect((ratio > 1) == (bitmap.width > bitmap.height) || ratio == 1)

        // The reference's own average: alpha-weighted colour, mean alpha.
        var sum = [0.0, 0.0, 0.0], alphaSum = 0.0
        for i in stride(from: 0, to: bitmap.pixels.count, by: 4) {
            let a = Double(bitmap.pixels[i + 3]) / 255
            for c in 0..<3 { sum[c] += a * Double(bitmap.pixels[i + c]) / 255 }
            alphaSum += a
        }
        let mean = sum.map { alphaSum > 0 ? $0 / alphaSum : 0 }
        let average = try #require(ThumbHash.averageRGBA(hash))
        for (got, want) in zip([average.r, average.g, average.b], mean) {
            #expect(abs(got - want) < 0.022, "\(recipe): average \(average) vs \(mean)")
        }
        #expect(abs(average.a - alphaSum / Double(bitmap.width * bitmap.height)) <= 1.0 / 30 + 1e-12)
    }

    @Test func hostileBytesNeverCrash() throws {
        #expect(ThumbHash.decode([]) == nil)
        #expect(ThumbHash.decode([0x1f]) == nil)
        #expect(ThumbHash.averageRGBA([1, 2, 3, 4]) == nil)
        #expect(ThumbHash.approximateAspectRatio([]) == nil)
        // Every truncation and a byte too many of every reference hash.
        for vector in ThumbHashVectors.encoded + ThumbHashVectors.decodedOnly {
            let hash = try #require(Data(base64Encoded: vector.hash)).map { $0 }
            for n in 0..<hash.count {
                #expect(ThumbHash.decode(Array(hash[..<n])) == nil, "\(vector.hash) cut to \(n)")
            }
            #expect(ThumbHash.decode(hash + [0]) == nil)
        }
        // A stored luminance count of 0 (portrait, and landscape) would be a 0-px picture.
        var zeroCount = try #require(Data(base64Encoded: ThumbHashVectors.encoded[0].hash)).map { $0 }
        zeroCount[3] &= ~7
        #expect(ThumbHash.decode(zeroCount) == nil && ThumbHash.approximateAspectRatio(zeroCount) == nil)
        zeroCount[4] |= 0x80
        #expect(ThumbHash.decode(zeroCount) == nil)

        // Random bytes of every length 0…40: nil or a well-formed picture, never a trap.
        var state: UInt32 = 12345
        var decoded = 0
        for length in 0...40 {
            for _ in 0..<300 {
                let bytes = (0..<length).map { _ in ThumbHashVectors.next(&state) }
                guard let image = ThumbHash.decode(bytes) else { continue }
                decoded += 1
                #expect((1...32).contains(image.width) && (1...32).contains(image.height))
                #expect(max(image.width, image.height) == 32 && image.rgba.count == image.width * image.height * 4)
                let opaque = stride(from: 3, to: image.rgba.count, by: 4).allSatisfy { image.rgba[$0] == 255 }
                #expect(bytes[2] & 0x80 != 0 || opaque, "no alpha flag, so every pixel is opaque")
            }
        }
        #expect(decoded > 100, "random bytes of the right length decode (\(decoded))")
    }

    @Test func roundingIsJavaScriptsMathRound() {
        let cases: [(Double, Int)] = [(0.5, 1), (1.5, 2), (2.5, 3), (-0.5, 0), (-1.5, -1), (-2.5, -2),
                                      (0.49999999999999994, 0), (-0.49999999999999994, 0), (62.5, 63), (31.499999, 31)]
        for (x, want) in cases {
            #expect(ThumbHash.jsRound(x) == want, "Math.round(\(x))")
        }
    }
}

/// The vectors' recipes and checksums; the same integer arithmetic as the node script.
enum ThumbHashVectors {
    struct Vector: Sendable, CustomTestStringConvertible {
        let recipe: Recipe?
        let width: Int, height: Int
        let hash: String
        /// The reference's hash changes when its cosines move by an ulp (see Fixtures/README.md).
        var cosineSensitive = false
        let decodedWidth: Int, decodedHeight: Int
        let fnv1a: UInt32
        /// x, y, r, g, b, a of a few decoded pixels.
        let samples: [[Int]]
        let aspect: Double
        let average: [Double]

        var testDescription: String { recipe.map { "\($0) \(width)×\(height)" } ?? hash }
    }

    enum Recipe: Sendable {
        case gradient, disc
        case noise(seed: UInt32), alphaNoise(seed: UInt32)
        /// `noise` with the last pixel's alpha 254: the smallest departure from opaque.
        case speck(seed: UInt32)
        case solid(UInt8, UInt8, UInt8, UInt8)

        func bitmap(width w: Int, height h: Int) -> TestImage {
            var pixels = [UInt8](repeating: 0, count: w * h * 4)
            var state: UInt32 = switch self { case .noise(let s), .alphaNoise(let s), .speck(let s): s; default: 0 }
            for y in 0..<h {
                for x in 0..<w {
                    let gr = 255 * x / max(w - 1, 1), gg = 255 * y / max(h - 1, 1)
                    let gb = 255 * (x + y) / max(w + h - 2, 1)
                    let px: [Int]
                    switch self {
                    case .gradient: px = [gr, gg, gb, 255]
                    case .noise, .speck:
                        let n1 = Int(next(&state)), n2 = Int(next(&state)), n3 = Int(next(&state))
                        px = [(3 * gr + n1) >> 2, (3 * gg + n2) >> 2, (3 * gb + n3) >> 2, 255]
                    case .alphaNoise: px = (0..<4).map { _ in Int(next(&state)) }
                    case .disc:
                        let dx = 2 * x + 1 - w, dy = 2 * y + 1 - h, m = min(w, h)
                        let d2 = dx * dx + dy * dy
                        px = [200, 60, 30, d2 < m * m / 2 ? 255 : d2 < m * m ? 128 : 0]
                    case .solid(let r, let g, let b, let a): px = [Int(r), Int(g), Int(b), Int(a)]
                    }
                    let o = (y * w + x) * 4
                    for c in 0..<4 { pixels[o + c] = UInt8(px[c]) }
                }
            }
            if case .speck = self { pixels[w * h * 4 - 1] = 254 }
            return TestImage(width: w, height: h, pixels: pixels)
        }
    }

    /// The script's LCG: the top byte of the next state.
    static func next(_ state: inout UInt32) -> UInt8 {
        state = state &* 1_664_525 &+ 1_013_904_223
        return UInt8(state >> 24)
    }

    static func fnv1a(_ bytes: [UInt8]) -> UInt32 {
        bytes.reduce(2_166_136_261 as UInt32) { ($0 ^ UInt32($1)) &* 16_777_619 }
    }
}

/// An RGBA image a recipe builds (the server's `Bitmap` is not this module's).
struct TestImage {
    let width: Int, height: Int
    let pixels: [UInt8]
    var isOpaque: Bool { stride(from: 3, to: pixels.count, by: 4).allSatisfy { pixels[$0] == 255 } }
}

extension ThumbHash {
    static func encode(_ image: TestImage) -> [UInt8] {
        encode(width: image.width, height: image.height, rgba: image.pixels)
    }
}
