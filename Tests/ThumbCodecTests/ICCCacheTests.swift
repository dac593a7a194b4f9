import CThumbCodec
import Testing

/// Built profiles are cached by their bytes (API.md § Output "Colour"):
/// an lcms2 transform for a LUT or CMYK profile takes 20–90 ms to build,
/// longer than the rest of a thumbnail. Serialized so the eviction test
/// cannot push out the entries the reuse test looks at.
@Suite(.serialized) struct ICCCacheTests {
    /// `profile` with a distinct creation date (header bytes 24…35), which
    /// lcms2 ignores: a different cache key for the same colours.
    static func variant(_ profile: [UInt8], _ n: Int) -> [UInt8] {
        var copy = profile
        copy[24] = UInt8(n >> 8 & 0xFF)
        copy[25] = UInt8(n & 0xFF)
        copy[26] = 0xA5   // no real profile of the fixtures has this year
        return copy
    }

    static func open(_ profile: [UInt8], model: Int32, inverted: Bool = false) -> OpaquePointer? {
        var message = [CChar](repeating: 0, count: 256)
        return profile.withUnsafeBytes {
            thumbd_icc_open($0.baseAddress, $0.count, model, inverted ? 1 : 0, &message, message.count)
        }
    }

    /// The same bytes give the same built transform; a copy elsewhere in
    /// memory still matches (the key is the content), while the CMYK
    /// inversion flag and a one-byte change make different entries.
    @Test func repeatedProfilesShareOneTransform() throws {
        let cmyk = Self.variant(ICC.profile("cmyk-lut.icc"), 1)
        let first = try #require(Self.open(cmyk, model: Int32(THUMBD_CMYK), inverted: true))
        defer { thumbd_icc_close(first) }
        #expect(thumbd_icc_kind(first) == Int32(THUMBD_ICC_TRANSFORM))
        let again = try #require(Self.open(Array(cmyk), model: Int32(THUMBD_CMYK), inverted: true))
        defer { thumbd_icc_close(again) }
        #expect(again == first)
        let plain = try #require(Self.open(cmyk, model: Int32(THUMBD_CMYK), inverted: false))
        defer { thumbd_icc_close(plain) }
        #expect(plain != first)
        let other = try #require(Self.open(Self.variant(ICC.profile("cmyk-lut.icc"), 2), model: Int32(THUMBD_CMYK), inverted: true))
        defer { thumbd_icc_close(other) }
        #expect(other != first)
    }

    /// At most 16 profiles stay cached, least recently used out first; a
    /// profile pushed out still works for the decodes that hold it.
    @Test func theCacheIsBounded() throws {
        let p3 = ICC.profile("display-p3.icc")
        var held: [OpaquePointer] = []
        defer { held.forEach { thumbd_icc_close($0) } }
        for n in 100..<120 { held.append(try #require(Self.open(Self.variant(p3, n), model: Int32(THUMBD_RGB)))) }
        var entries = 0
        var hits: UInt64 = 0, misses: UInt64 = 0
        thumbd_icc_cache_counts(&entries, &hits, &misses)
        #expect(entries <= 16)
        let newest = try #require(Self.open(Self.variant(p3, 119), model: Int32(THUMBD_RGB)))
        let oldest = try #require(Self.open(Self.variant(p3, 100), model: Int32(THUMBD_RGB)))
        held += [newest, oldest]
        #expect(newest == held[19], "the most recent profile is still cached")
        #expect(oldest != held[0], "the first of 20 was evicted and is built again")
        var curves = [Float](repeating: 0, count: 768), matrix = [Float](repeating: 0, count: 9)
        var again = [Float](repeating: 0, count: 9)
        thumbd_icc_matrix_shaper(held[0], &curves, &matrix)
        thumbd_icc_matrix_shaper(oldest, &curves, &again)
        #expect(matrix == again && matrix != [1, 0, 0, 0, 1, 0, 0, 0, 1])
    }
}
