import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbAPI
@testable import ThumbService

/// A stopped daemon is freed: the server, the handler that reads the server's
/// figures, the service and its caches do not keep each other alive. (The
/// handler once held the server strongly, and every drained Daemon stayed in
/// memory.) LeakSanitizer reports such a cycle in the sanitizer run; this
/// checks the same in every run.
@Suite struct DaemonLifetimeTests {
    @Test func aStoppedDaemonIsFreedAfterServingAThumbnail() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let dir = NSTemporaryDirectory() + "thumbd-lifetime-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        weak var freedDaemon: Daemon?
        weak var freedService: ThumbnailService?
        do {
            let daemon = try EndToEndTests.TestDaemon(store: dir)
            freedDaemon = daemon.daemon
            freedService = daemon.service
            let url = origin.url("/cat.jpg").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(daemon.get("/thumbnail?url=\(url)&w=40").status == 200)
            #expect(daemon.get("/stats").status == 200)
            daemon.stop()
        }
        #expect(eventually { freedDaemon == nil && freedService == nil },
                "daemon freed: \(freedDaemon == nil), service freed: \(freedService == nil)")
    }
}
