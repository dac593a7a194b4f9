import Foundation
import Synchronization
import Testing
import ThumbTestSupport
import ThumbClock
import ThumbHTTP
@testable import ThumbFetch
@testable import ThumbAPI
@testable import ThumbJSON
@testable import ThumbService

/// The real `Daemon` the suites that run against SeaweedFS (`S3SourceTests`,
/// `SharedStoreTests`) start: on a loopback port, on a fresh disk store
/// (removed by `stop()`), its store failure log collected. It lives here,
/// not in ThumbTestSupport, which does not depend on the server's modules.
final class S3TestDaemon: @unchecked Sendable {
    let daemon: Daemon
    let port: UInt16
    let directory = NSTemporaryDirectory() + "thumbd-s3-\(UUID().uuidString)"
    private let logged = Lines()

    /// A class of its own: the failure log's closure must not hold the
    /// daemon that holds it.
    private final class Lines: Sendable {
        let lines = Mutex<[String]>([])
    }

    /// `change` starts from the defaults with a render deadline that cannot
    /// fire (debug builds on a loaded machine take seconds per render);
    /// `fetcher` replaces the real one built from the configuration (the
    /// virtual-host test maps names to 127.0.0.1).
    /// `wallClock` dates fetched originals: a test ages them by moving it.
    init(fetcher: ((ServiceConfiguration) -> any OriginFetching)? = nil, wallClock: any WallClock = SystemWallClock(),
         _ change: (inout DaemonConfiguration) -> Void) throws {
        var c = DaemonConfiguration()
        c.service.limits.maxRenderSeconds = 600
        change(&c)
        daemon = Daemon(configuration: c, disk: try DiskStore(directory: directory, maxBytes: c.service.diskStore.maxBytes),
                        fetcher: fetcher?(c.service), wallClock: wallClock)
        let logged = self.logged
        daemon.service.setStoreFailureLog { line in logged.lines.withLock { $0.append(line) } }
        port = try daemon.listen(ListenAddress.inet(host: "127.0.0.1", port: 0))
    }

    func stop(sourceLocation: SourceLocation = #_sourceLocation) {
        daemon.server.stop(sourceLocation: sourceLocation)
        daemon.service.renders.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func get(_ target: String, method: String = "GET") -> (status: Int, headers: [String: String], body: [UInt8]) {
        RawHTTPClient.exchange(port: port, method: method, target: target, headers: [:], body: nil)
    }

    /// One `/stats` section's integers (`[:]` when there is no such section).
    func stats(_ section: String) -> [String: Int] {
        guard case .object(let top)? = try? JSONParser.parse(get("/stats").body),
              case .object(let fields)? = top.first(where: { $0.key == section })?.value else { return [:] }
        var out: [String: Int] = [:]
        for (name, value) in fields { if case .integer(let n) = value { out[name] = n } }
        return out
    }

    /// What the store failure log has said so far.
    var log: [String] { logged.lines.withLock { $0 } }
    /// Files in the disk store other than stored originals and facts: leftovers.
    var leftovers: [String] { regularFiles(under: directory).filter { $0.hasPrefix("tmp/") } }
}

extension DaemonConfiguration {
    /// The `s3` section for `s3`: its endpoint (or `endpoint`, a proxy in
    /// front of it) and its key, signed with its secret (or `secret`, a wrong one).
    mutating func useStore(_ s3: SeaweedS3, endpoint: String? = nil, secret: String? = nil) {
        service.s3.endpoint = endpoint ?? s3.endpoint
        service.s3.accessKeyId = s3.accessKey
        service.s3.secretAccessKey = Secret(secret ?? s3.secretKey)
    }
}
