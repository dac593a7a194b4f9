import Foundation
import Testing
@testable import ThumbHashFormat

/// The reference hashes that change when the reference's cosines move by one ulp
/// (`cosineSensitive`, see Fixtures/README.md). Their differing bits are either amplified
/// rounding noise of a channel whose AC terms are all zero (its quantised scale is 0, so the
/// decoder ignores them) or a zero coefficient's tie, 15 · 0.5 = 7.5, that rounds to 7 or 8.
/// No cosine but V8's own reproduces them, so thumbd (the platform's `cos`) is held to the
/// format's structure and to the picture those bits can change, not to the bits.
@Suite struct ThumbHashCosineSensitivityTests {
    /// The header (everything before the AC nibbles) is the same; each AC nibble of a channel
    /// the decoder uses differs by at most one (a tie); and the two decoded pictures differ by
    /// no more than those one-step differences can make. One step of a coefficient moves a
    /// channel by scale / 7.5 times a cosine product |fx · 2fy| ≤ 2 (P and Q scaled 1.25× by
    /// the decoder); r, g = l + p/3 ± q/2 and b = l − 2p/3; the byte truncation adds 1.
    @Test(arguments: ThumbHashVectors.encoded.filter(\.cosineSensitive))
    func sameHeaderAndTheSamePictureButForTies(_ vector: ThumbHashVectors.Vector) throws {
        let recipe = try #require(vector.recipe)
        let ours = ThumbHash.encode(recipe.bitmap(width: vector.width, height: vector.height))
        let theirs = try #require(Data(base64Encoded: vector.hash)).map { $0 }
        let header = try #require(ThumbHash.Header(theirs))
        try #require(ours.count == theirs.count, "\(recipe): \(ours.count) bytes, not \(theirs.count)")
        #expect(ours[..<header.acStart] == theirs[..<header.acStart], "\(recipe): header bytes differ")

        let counts = [ThumbHash.coefficientCount(nx: header.lx, ny: header.ly),
                      ThumbHash.coefficientCount(nx: 3, ny: 3), ThumbHash.coefficientCount(nx: 3, ny: 3),
                      header.hasAlpha ? ThumbHash.coefficientCount(nx: 5, ny: 5) : 0]
        let steps = [header.lScale, header.pScale * 1.25, header.qScale * 1.25, header.aScale].map { $0 / 7.5 }
        var reach = [0.0, 0.0, 0.0, 0.0]  // the most the AC differences move l, p, q, a
        var index = 0
        for (channel, count) in counts.enumerated() {
            for _ in 0..<count {
                let byte = header.acStart + index >> 1, shift = UInt8((index & 1) << 2)
                let step = abs(Int(ours[byte] >> shift & 15) - Int(theirs[byte] >> shift & 15))
                #expect(steps[channel] == 0 || step <= 1, "\(recipe): channel \(channel) nibble \(index) moved \(step)")
                reach[channel] += Double(step) * steps[channel] * 2
                index += 1
            }
        }
        let (l, p, q, a) = (reach[0], reach[1], reach[2], reach[3])
        let bound = [l + p / 3 + q / 2, l + p / 3 + q / 2, l + 2 * p / 3, a].map { Int(255 * $0) + 1 }

        let mine = try #require(ThumbHash.decode(ours)), reference = try #require(ThumbHash.decode(theirs))
        try #require(mine.width == reference.width && mine.height == reference.height)
        var worst = [0, 0, 0, 0]
        for i in mine.rgba.indices {
            worst[i & 3] = max(worst[i & 3], abs(Int(mine.rgba[i]) - Int(reference.rgba[i])))
        }
        for c in 0..<4 {
            #expect(worst[c] <= bound[c], "\(recipe): RGBA[\(c)] differs by \(worst[c]), more than \(bound[c])")
        }
    }

    /// The flag follows from the pictures, so it cannot spread unnoticed. Noise has no zero
    /// coefficient. A disc's colour is flat (only alpha varies) and symmetric. A solid bigger
    /// than one pixel has only zero AC terms, noise unless the channel is exactly 0 (opaque
    /// black, or alpha 0: all of L, P, Q, A zero); a 1×1 has no noise to amplify. A gradient's
    /// q = r − g = gr(x) − gg(y) has a zero (1, 1) coefficient, a tie 7.5 ± noise in every
    /// gradient; in these five, and only these, a one-ulp nudge moves it across (measured with
    /// 66 nudge patterns: the same five).
    @Test func sensitiveVectorsAreTheOnesWithZeroCoefficients() throws {
        let sensitiveGradients: Set<[Int]> = [[7, 93], [78, 22], [39, 68], [74, 65], [22, 35]]
        for vector in ThumbHashVectors.encoded {
            let recipe = try #require(vector.recipe)
            let expected = switch recipe {
            case .noise, .alphaNoise, .speck: false
            case .disc: true
            case .solid(let r, let g, let b, let a): vector.width * vector.height > 1 && a != 0 && (r | g | b != 0 || a != 255)
            case .gradient: sensitiveGradients.contains([vector.width, vector.height])
            }
            #expect(vector.cosineSensitive == expected, "\(recipe) \(vector.width)×\(vector.height)")
        }
        #expect(ThumbHashVectors.encoded.filter(\.cosineSensitive).count == 19)
        #expect(ThumbHashVectors.encoded.filter { !$0.cosineSensitive }.count == 48)
    }
}
