import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbService

@Suite struct NegativeCacheTests {
    static let url = "http://origin.test/a.jpg"

    /// SourcesAndLimits.md: these failures are remembered and replayed as they were.
    static let remembered: [ServiceError] = [
        .sourceNotFound, .unsupportedFormat("not an image"), .corruptImage("truncated"),
        .imageTooLarge("over maxSourcePixels"), .sourceTooLarge(limit: 1024), .originError("answered 500"),
    ]

    /// Timeouts (load can cause them) and failures that say nothing about the
    /// source are never remembered.
    static let forgotten: [ServiceError] = [
        .originTimeout("no answer in 10 s"), .overloaded, .internalError("bug"), .badRequest("w"),
        .forbiddenSource("private address"),
    ]

    @Test(arguments: remembered) func remembersTheErrorsSPECNames(_ error: ServiceError) {
        let cache = NegativeCache(ttl: .seconds(30), clock: ManualClock())
        cache.remember(Self.url, error)
        #expect(cache.lookup(Self.url) == error)
        #expect(cache.lookup("http://origin.test/other.jpg") == nil)
    }

    @Test(arguments: forgotten) func doesNotRememberOtherErrors(_ error: ServiceError) {
        let cache = NegativeCache(ttl: .seconds(30), clock: ManualClock())
        cache.remember(Self.url, error)
        #expect(cache.lookup(Self.url) == nil)
    }

    @Test func entriesExpireAfterTheTTL() {
        let clock = ManualClock()
        let cache = NegativeCache(ttl: .seconds(30), clock: clock)
        cache.remember(Self.url, .sourceNotFound)
        clock.advance(by: .milliseconds(29_999))
        #expect(cache.lookup(Self.url) == .sourceNotFound)
        clock.advance(by: .milliseconds(1))
        #expect(cache.lookup(Self.url) == nil, "expired exactly at remember + ttl")
        #expect(!cache.forget(Self.url), "an expired entry is dropped on lookup, not hidden")
    }

    @Test func rememberingAgainRestartsTheTTLAndReplacesTheError() {
        let clock = ManualClock()
        let cache = NegativeCache(ttl: .seconds(30), clock: clock)
        cache.remember(Self.url, .sourceNotFound)
        clock.advance(by: .seconds(20))
        cache.remember(Self.url, .corruptImage("bad scan"))
        clock.advance(by: .seconds(20))
        #expect(cache.lookup(Self.url) == .corruptImage("bad scan"))
    }

    @Test func forgetRemovesOneSourceAndSaysWhetherItWasThere() {
        let cache = NegativeCache(ttl: .seconds(30), clock: ManualClock())
        cache.remember(Self.url, .sourceNotFound)
        cache.remember("http://origin.test/b.jpg", .originError("502"))
        #expect(cache.forget(Self.url))
        #expect(!cache.forget(Self.url))
        #expect(cache.lookup(Self.url) == nil)
        #expect(cache.lookup("http://origin.test/b.jpg") == .originError("502"))
    }

    @Test func zeroTTLRemembersNothing() {
        let cache = NegativeCache(ttl: .zero, clock: ManualClock())
        cache.remember(Self.url, .sourceNotFound)
        #expect(cache.lookup(Self.url) == nil)
        #expect(!cache.forget(Self.url))
    }

    /// A reload's new TTL applies to failures remembered from then on; those
    /// already remembered keep the expiry they were given.
    @Test func setTTLAppliesToLaterFailures() {
        let clock = ManualClock()
        let cache = NegativeCache(ttl: .seconds(30), clock: clock)
        cache.remember("http://origin.test/early.jpg", .sourceNotFound)
        cache.setTTL(.seconds(5))
        cache.remember(Self.url, .sourceNotFound)
        clock.advance(by: .seconds(6))
        #expect(cache.lookup(Self.url) == nil)
        #expect(cache.lookup("http://origin.test/early.jpg") == .sourceNotFound)
        cache.setTTL(.zero)
        cache.remember("http://origin.test/late.jpg", .sourceNotFound)
        #expect(cache.lookup("http://origin.test/late.jpg") == nil, "TTL 0 turns remembering off")
        #expect(cache.lookup("http://origin.test/early.jpg") == .sourceNotFound)
    }

    /// Endless distinct failing URLs cannot grow the table without bound:
    /// the 1024th entry sweeps out the expired ones and keeps the live ones.
    @Test func expiredEntriesAreSweptAsNewOnesArrive() {
        let clock = ManualClock()
        let cache = NegativeCache(ttl: .seconds(1), clock: clock)
        for n in 0..<1023 { cache.remember("http://origin.test/old\(n)", .sourceNotFound) }
        clock.advance(by: .seconds(2))
        #expect(cache.forget("http://origin.test/old0"), "expired, but held until a sweep")
        cache.remember("http://origin.test/old0", .originError("again"))   // fresh: survives the sweep
        cache.remember("http://origin.test/new", .sourceNotFound)          // entry 1024: sweep
        #expect((1..<1023).allSatisfy { !cache.forget("http://origin.test/old\($0)") })
        #expect(cache.lookup("http://origin.test/old0") == .originError("again"))
        #expect(cache.lookup("http://origin.test/new") == .sourceNotFound)
    }

    /// SourcesAndLimits.md § Choices: the bound is 16 MiB, every byte of an
    /// entry counted. 12 000 failing 2 KB URLs under a long TTL (26 MB of
    /// URLs alone) used to be kept whole (the bound was 100 000 entries);
    /// now the least recently asked for go, and the count stays near
    /// 16 MiB / 2.3 KB.
    @Test func boundedByBytesEveryByteCounted() {
        let cache = NegativeCache(ttl: .seconds(86_400), clock: ManualClock())
        let pad = String(repeating: "p", count: 2000)
        func url(_ n: Int) -> String { "http://origin.test/\(n)/\(pad)" }
        let host = "origin.test"
        for n in 0..<12_000 { cache.remember(url(n), .originError("cannot connect to \(host)")) }
        #expect(cache.bytes <= NegativeCache.defaultLimitBytes)
        #expect(cache.bytes >= cache.count * (url(0).utf8.count + "cannot connect to origin.test".utf8.count
                                               + NegativeCache.entryOverhead))
        #expect(cache.count < 16 << 20 / 2048 && cache.count > 5000, "\(cache.count) remembered")
        #expect(cache.lookup(url(0)) == nil, "the oldest went")
        #expect(cache.lookup(url(11_999)) == .originError("cannot connect to origin.test"), "the newest stays")
    }

    /// Past the bound the least recently asked for go first: a failure
    /// being asked for survives a storm of new ones.
    @Test func aFailureBeingAskedForOutlivesNewOnes() {
        let unit = NegativeCache.cost("http://origin.test/00000", .sourceNotFound)
        let cache = NegativeCache(ttl: .seconds(3600), clock: ManualClock(), limitBytes: 100 * unit)
        cache.remember("http://origin.test/hot00", .sourceNotFound)
        for n in 0..<1000 {
            #expect(cache.lookup("http://origin.test/hot00") == .sourceNotFound, "step \(n)")
            cache.remember("http://origin.test/\(String(format: "%05d", n))", .sourceNotFound)
            #expect(cache.bytes <= 100 * unit && cache.count <= 100)
        }
        #expect(cache.count == 100 && cache.lookup("http://origin.test/00899") == nil)
        #expect(cache.lookup("http://origin.test/00999") == .sourceNotFound)
    }
}
