import Dispatch
import Synchronization
import Testing
import ThumbAPI
import ThumbFetch
import ThumbHTTP
import ThumbService
import ThumbTestSupport

/// A `500 internal_error` tells the client nothing of what failed, so the
/// detail must reach the operator's log (Errors.md) — before, it went nowhere.
@Suite struct InternalErrorLogTests {
    /// A download whose file could not be written: the service's 500.
    struct FullDisk: OriginFetching {
        func fetchOriginal(_ source: OriginalSource, conditional: Conditional?, into sink: any BodySink,
                           completion: @escaping @Sendable (Result<FetchResult, ServiceError>) -> Void) {
            completion(.failure(.internalError("writing tmp/3f2a: No space left on device")))
        }
    }

    @Test func theDetailOfA500GoesToTheLogNotToTheClient() throws {
        var c = DaemonConfiguration()
        c.service.origin.allowPrivateNetworks = true
        let daemon = Daemon(configuration: c, disk: nil, fetcher: FullDisk())
        let logged = Mutex<[String]>([])
        daemon.handler.setInternalErrorLog { line in logged.withLock { $0.append(line) } }
        let port = try daemon.listen(ListenAddress.inet(host: "127.0.0.1", port: 0))
        defer {
            daemon.server.stop()
            daemon.service.renders.shutdown()
        }
        let target = "/thumbnail?url=http%3A%2F%2F127.0.0.1%3A9%2Fa.jpg&w=64"
        let answer = RawHTTPClient.exchange(port: port, method: "GET", target: target, headers: [:], body: nil)
        #expect(answer.status == 500)
        #expect(!String(decoding: answer.body, as: UTF8.self).contains("No space"))
        #expect(logged.withLock { $0 } == ["GET \(target): writing tmp/3f2a: No space left on device"])

        // Other failures are the client's to read, and are not logged as errors.
        let bad = RawHTTPClient.exchange(port: port, method: "GET", target: "/thumbnail?w=64", headers: [:], body: nil)
        #expect(bad.status == 400)
        #expect(logged.withLock { $0.count } == 1)
    }
}
