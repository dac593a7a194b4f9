import Foundation
import Testing
import ThumbCodec
import ThumbImaging

/// A profile that cannot be parsed, is over 4 MiB, or describes another colour
/// space is ignored: the pixels decode as sRGB, with no error (API.md § Output).
@Suite struct IgnoredProfileTests {
    let testorig = Fixtures.bytes("testorig.jpg")
    let p3 = ICC.profile("display-p3.icc")

    @Test func brokenJPEGProfilesAreIgnored() throws {
        let plain = try ICC.decode(testorig)
        let garbage = Array("ICC_PROFILE".utf8) + [UInt8](repeating: 0x5A, count: 400)
        let twoParts = ICC.segments(p3, chunk: 400)
        let cases: [(String, [[UInt8]])] = [
            ("garbage", ICC.segments(garbage)),
            ("truncated", ICC.segments(Array(p3.prefix(300)))),
            ("second of two segments only", [twoParts[1]]),
            ("a sequence number twice", [twoParts[0], twoParts[0]]),
            ("over 4 MiB", ICC.segments(ICC.padded(p3, to: 4 * 1024 * 1024 + 1))),
        ]
        for (label, markers) in cases {
            #expect(try ICC.decode(ICC.tagging(testorig, with: markers)) == plain, "\(label)")
        }
        // The same padding under the limit is a valid profile and is applied.
        let applied = try ICC.decode(ICC.tagging(testorig, profile: ICC.padded(p3, to: 1024 * 1024)))
        #expect(applied == (try ICC.decode(ICC.tagging(testorig, profile: p3))) && applied != plain)
    }

    @Test func mismatchedJPEGProfilesAreIgnored() throws {
        let gray = Fixtures.bytes("gray.jpg"), cmyk = Fixtures.bytes("cmyk.jpg")
        let cases: [(String, [UInt8], [UInt8])] = [
            ("RGB profile, gray JPEG", gray, p3),
            ("CMYK profile, gray JPEG", gray, ICC.profile("cmyk-lut.icc")),
            ("gray profile, RGB JPEG", testorig, ICC.profile("gray-gamma18.icc")),
            ("CMYK profile, RGB JPEG", testorig, ICC.profile("cmyk-lut.icc")),
            ("RGB profile, CMYK JPEG", cmyk, p3),
        ]
        for (label, jpeg, profile) in cases {
            #expect(try ICC.decode(ICC.tagging(jpeg, profile: profile)) == (try ICC.decode(jpeg)), "\(label)")
        }
    }

    @Test(arguments: ["garbage-iccp.png", "truncated-iccp.png", "p3-padded-over-4mib.png",
                      "rgb-with-gray-profile.png", "iccp-bomb.png"])
    func brokenOrMismatchedPNGProfilesAreIgnored(_ name: String) throws {
        let start = Date()
        let bitmap = try ICC.decode(Fixtures.bytes("icc/ignored/\(name)"))
        #expect(Date().timeIntervalSince(start) < 2)
        #expect(bitmap == (try ICC.decode(Fixtures.bytes("icc/ignored/untagged.png"))))
    }

    @Test func grayPNGWithAnRGBProfileIsIgnored() throws {
        #expect(try ICC.decode(Fixtures.bytes("icc/ignored/gray-with-p3.png"))
                == (try ICC.decode(Fixtures.bytes("icc/ignored/gray-untagged.png"))))
    }

    /// Control for the 4 MiB case: the same padding at 1 MiB is applied.
    @Test func paddedPNGProfileUnderTheLimitIsApplied() throws {
        let padded = try ICC.decode(Fixtures.bytes("icc/ignored/p3-padded-1mib.png"))
        #expect(padded == (try ICC.decode(Fixtures.bytes("icc/ignored/p3.png"))))
        #expect(padded != (try ICC.decode(Fixtures.bytes("icc/ignored/untagged.png"))))
    }
}
