import Synchronization
import Testing
import ThumbTestSupport
@testable import ThumbService

/// A wall clock the test moves by hand.
private final class ManualClock: Sendable {
    private let seconds = Mutex<Double>(1_000_000)
    func advance(_ delta: Double) { seconds.withLock { $0 += delta } }
    var now: @Sendable () -> Double { { self.seconds.withLock { $0 } } }
}

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
        .forbiddenSource("private address"), .unauthorized, .badSignature, .notFound,
        .methodNotAllowed(allow: "GET"),
    ]

    @Test(arguments: remembered) func remembersTheErrorsSPECNames(_ error: ServiceError) {
        let cache = NegativeCache(ttlSeconds: 30, now: ManualClock().now)
        cache.remember(Self.url, error)
        #expect(cache.lookup(Self.url) == error)
        #expect(cache.lookup("http://origin.test/other.jpg") == nil)
    }

    @Test(arguments: forgotten) func doesNotRememberOtherErrors(_ error: ServiceError) {
        let cache = NegativeCache(ttlSeconds: 30, now: ManualClock().now)
        cache.remember(Self.url, error)
        #expect(cache.lookup(Self.url) == nil)
    }

    @Test func entriesExpireAfterTheTTL() {
        let clock = ManualClock()
        let cache = NegativeCache(ttlSeconds: 30, now: clock.now)
        cache.remember(Self.url, .sourceNotFound)
        clock.advance(29.9)
        #expect(cache.lookup(Self.url) == .sourceNotFound)
        clock.advance(0.1)
        #expect(cache.lookup(Self.url) == nil, "expired exactly at remember + ttl")
        clock.advance(-10)
        #expect(cache.lookup(Self.url) == nil, "an expired entry is dropped on lookup, not hidden")
    }

    @Test func rememberingAgainRestartsTheTTLAndReplacesTheError() {
        let clock = ManualClock()
        let cache = NegativeCache(ttlSeconds: 30, now: clock.now)
        cache.remember(Self.url, .sourceNotFound)
        clock.advance(20)
        cache.remember(Self.url, .corruptImage("bad scan"))
        clock.advance(20)
        #expect(cache.lookup(Self.url) == .corruptImage("bad scan"))
    }

    @Test func forgetRemovesOneSourceAndSaysWhetherItWasThere() {
        let cache = NegativeCache(ttlSeconds: 30, now: ManualClock().now)
        cache.remember(Self.url, .sourceNotFound)
        cache.remember("http://origin.test/b.jpg", .originError("502"))
        #expect(cache.forget(Self.url))
        #expect(!cache.forget(Self.url))
        #expect(cache.lookup(Self.url) == nil)
        #expect(cache.lookup("http://origin.test/b.jpg") == .originError("502"))
    }

    @Test func zeroTTLRemembersNothing() {
        let cache = NegativeCache(ttlSeconds: 0, now: ManualClock().now)
        cache.remember(Self.url, .sourceNotFound)
        #expect(cache.lookup(Self.url) == nil)
        #expect(!cache.forget(Self.url))
    }

    /// A reload's new TTL applies to failures remembered from then on; those
    /// already remembered keep the expiry they were given.
    @Test func setTTLAppliesToLaterFailures() {
        let clock = ManualClock()
        let cache = NegativeCache(ttlSeconds: 30, now: clock.now)
        cache.remember("http://origin.test/early.jpg", .sourceNotFound)
        cache.setTTL(5)
        cache.remember(Self.url, .sourceNotFound)
        clock.advance(6)
        #expect(cache.lookup(Self.url) == nil)
        #expect(cache.lookup("http://origin.test/early.jpg") == .sourceNotFound)
        cache.setTTL(0)
        cache.remember("http://origin.test/late.jpg", .sourceNotFound)
        #expect(cache.lookup("http://origin.test/late.jpg") == nil, "TTL 0 turns remembering off")
        #expect(cache.lookup("http://origin.test/early.jpg") == .sourceNotFound)
    }

    /// Endless distinct failing URLs cannot grow the table without bound:
    /// the 1024th entry sweeps out the expired ones and keeps the live ones.
    @Test func expiredEntriesAreSweptAsNewOnesArrive() {
        let clock = ManualClock()
        let cache = NegativeCache(ttlSeconds: 1, now: clock.now)
        for n in 0..<1023 { cache.remember("http://origin.test/old\(n)", .sourceNotFound) }
        clock.advance(2)
        #expect(cache.forget("http://origin.test/old0"), "expired, but held until a sweep")
        cache.remember("http://origin.test/old0", .originError("again"))   // fresh: survives the sweep
        cache.remember("http://origin.test/new", .sourceNotFound)          // entry 1024: sweep
        #expect((1..<1023).allSatisfy { !cache.forget("http://origin.test/old\($0)") })
        #expect(cache.lookup("http://origin.test/old0") == .originError("again"))
        #expect(cache.lookup("http://origin.test/new") == .sourceNotFound)
    }
}
