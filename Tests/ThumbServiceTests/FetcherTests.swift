import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbFetch
@testable import ThumbService

/// The fetcher against a real origin on 127.0.0.1 (private networks allowed,
/// since loopback is the only place tests may connect to).
@Suite(.serialized) struct FetcherTests {
    private func fetcher(_ change: (inout ServiceConfiguration) -> Void = { _ in }) -> Fetcher {
        var c = ServiceConfiguration()
        c.origin.allowPrivateNetworks = true
        c.origin.timeoutSeconds = 0.8
        c.limits.maxSourceBytes = 1 << 20
        change(&c)
        return Fetcher(policy: FetchPolicy(configuration: c))
    }

    @Test func fetchesBytesWithValidatorsAndAnswers304ToAConditionalRequest() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let sink = MemorySink()
        guard case .fetched(let length, let etag, let lm, _, _) = try fetcher().fetchOriginal(origin.url("/cat.jpg"), conditional: nil, into: sink) else {
            Issue.record("not fetched"); return
        }
        #expect(sink.bytes == TestOrigin.jpeg && length == TestOrigin.jpeg.count)
        #expect(etag == "\"v1\"" && lm == "Sun, 22 Nov 2026 10:00:00 GMT")
        let again = try fetcher().fetchOriginal(origin.url("/cat.jpg"), conditional: Conditional(etag: "\"v1\"", lastModified: nil),
                                                into: MemorySink())
        #expect(again == .notModified(etag: "\"v1\"", lastModified: nil))
    }

    @Test(arguments: [("/missing.jpg", ServiceError.sourceNotFound), ("/gone.jpg", .sourceNotFound),
                      ("/error.jpg", .originError("origin answered 500")),
                      ("/loop", .originError("too many redirects (over 3)")),
                      ("/hop/4", .originError("too many redirects (over 3)")),
                      ("/to-ftp", .forbiddenSource("only http and https sources are allowed")),
                      ("/to-file", .forbiddenSource("only http and https sources are allowed")),
                      ("/big.bin", .sourceTooLarge(limit: 1 << 20))])
    func originFailuresMapToSpecErrors(_ path: String, _ expected: ServiceError) throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        #expect(throws: expected) { try fetcher().fetchOriginal(origin.url(path), conditional: nil, into: MemorySink()) }
    }

    @Test func redirectsWithinTheLimitAndRelativeOnesAreFollowed() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let sink = MemorySink()
        guard case .fetched(_, _, _, let final, _) = try fetcher().fetchOriginal(origin.url("/hop/3"), conditional: nil, into: sink) else {
            Issue.record("not fetched"); return
        }
        #expect(sink.bytes == TestOrigin.jpeg && final == origin.url("/cat.jpg") && origin.hits("/hop/1") == 1)
        guard case .fetched = try fetcher().fetchOriginal(origin.url("/relative"), conditional: nil, into: MemorySink()) else { Issue.record("relative"); return }
    }

    @Test func aSlowOriginTimesOutNearTheDeadline() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let start = Date()
        #expect(throws: ServiceError.originTimeout("origin took longer than origin.timeoutSeconds")) {
            try fetcher().fetchOriginal(origin.url("/slow.jpg"), conditional: nil, into: MemorySink())
        }
        #expect(Date().timeIntervalSince(start) < 1.9)   // the origin answers at 2 s
    }

    @Test func aClosedPortIsAnOriginError() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let port = origin.port
        origin.server.drain(deadline: 0) {}
        // The listener closes on the server's own queue: a moment for the real socket to be gone.
        usleep(100_000)
        #expect(throws: ServiceError.self) { try fetcher().fetchOriginal("http://127.0.0.1:\(port)/cat.jpg", conditional: nil, into: MemorySink()) }
    }

    @Test func privateAddressesAreRefusedBeforeAnyConnection() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let strict = fetcher { $0.origin.allowPrivateNetworks = false }
        #expect(throws: ServiceError.forbiddenSource("source address 127.0.0.1 is loopback")) {
            try strict.fetchOriginal(origin.url("/cat.jpg"), conditional: nil, into: MemorySink())
        }
        #expect(throws: ServiceError.self) { try strict.fetchOriginal("http://localhost:\(origin.port)/cat.jpg", conditional: nil, into: MemorySink()) }
        #expect(origin.totalHits == 0)
    }

    @Test func allowedHostsApplyToEveryRedirectTarget() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let onlyLoopbackLiteral = fetcher { $0.origin.allowedHosts = ["127.0.0.1"] }
        #expect(throws: ServiceError.forbiddenSource("host localhost is not in origin.allowedHosts")) {
            try onlyLoopbackLiteral.fetchOriginal(origin.url("/to-localhost"), conditional: nil, into: MemorySink())
        }
        #expect(origin.hits("/to-localhost") == 1 && origin.hits("/cat.jpg") == 0)
        #expect(throws: ServiceError.self) {
            try fetcher { $0.origin.allowedHosts = ["*.example.com"] }.fetchOriginal(origin.url("/cat.jpg"), conditional: nil, into: MemorySink())
        }
    }
}

private extension OriginFetching {
    /// A fetch of a URL as a request would give it, parsed as a request's is.
    func fetchOriginal(_ text: String, conditional: Conditional?, into sink: any BodySink) throws(ServiceError) -> FetchResult {
        let source: OriginalSource
        do throws(FetchError) { source = try OriginalSource(text) } catch { throw ServiceError(error) }
        return try fetchOriginal(source, conditional: conditional, into: sink)
    }
}
