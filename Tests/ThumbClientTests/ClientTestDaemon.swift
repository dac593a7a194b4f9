import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import ThumbAPI
import ThumbClient
import ThumbHTTP
import ThumbService
import ThumbTestSupport

/// The real `Daemon` on a loopback port with a real origin beside it, and a
/// client pointed at it.
final class ClientTestDaemon: @unchecked Sendable {
    let daemon: Daemon
    let origin: TestOrigin
    let port: UInt16
    let store = NSTemporaryDirectory() + "thumbd-client-\(UUID().uuidString)"

    init(_ change: (inout DaemonConfiguration) -> Void = { _ in }) throws {
        origin = try TestOrigin()
        var c = DaemonConfiguration()
        c.service.origin.allowPrivateNetworks = true   // the origin is on loopback
        c.service.limits.maxRenderSeconds = 600
        change(&c)
        daemon = Daemon(configuration: c, disk: try DiskStore(directory: store, maxBytes: c.service.diskStore.maxBytes))
        port = try daemon.listen(ListenAddress.inet(host: "127.0.0.1", port: 0))
    }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    func client(session: URLSession? = nil, _ change: (inout ThumbClient.Configuration) -> Void = { _ in }) -> ThumbClient {
        var c = ThumbClient.Configuration(baseURL: baseURL, signingKey: daemon.configuration.security.signingKey,
                                          adminToken: daemon.configuration.security.adminToken)
        change(&c)
        return ThumbClient(configuration: c, session: session)
    }

    func stop() {
        daemon.server.stop()
        daemon.service.renders.shutdown()
        origin.stop()
        try? FileManager.default.removeItem(atPath: store)
    }

    /// Runs `body` with a daemon, and stops everything after.
    static func with(_ change: (inout DaemonConfiguration) -> Void = { _ in },
                     _ body: (ClientTestDaemon) async throws -> Void) async throws {
        let d = try ClientTestDaemon(change)
        defer { d.stop() }
        try await body(d)
    }
}
