import Foundation
import Glibc
import Testing
import ThumbTestSupport

/// The shared store's log lines seen from outside the real binary
/// (SeveralInstances.md): they name the shared store, at `warning`, and are
/// never passed off as an `s3://` source's failure.
@Suite struct SharedStoreLogTests {
    @Test func theSharedStoresLinesNameTheSharedStore() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let box = try DaemonSandbox("shared-log")
        let keyFile = box.directory + "/shared.key"
        try Data("a-fleet-key-of-more-than-32-bytes-0123456789\n".utf8).write(to: URL(fileURLWithPath: keyFile))
        let port = Loopback.freePort()
        // A store nothing listens on: the look-up fails, and says so once.
        try box.write(#"""
            {"listen": "127.0.0.1:\#(port)", "origin": {"allowPrivateNetworks": true},
             "diskStore": {"path": "\#(box.storePath)", "shared": {"bucket": "fleet", "keyFile": "\#(keyFile)"}},
             "s3": {"endpoint": "http://127.0.0.1:\#(Loopback.freePort())", "accessKeyId": "id", "secretAccessKey": "s",
                    "timeoutSeconds": 2}}
            """#)
        let daemon = try DaemonProcess(config: box.configPath)
        defer { daemon.stop() }
        try #require(daemon.waitUntilHealthy(port: port), "thumbd did not start: \(daemon.stderr)")
        let url = origin.url("/cat.jpg").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let c = try #require(HTTPConnection(port: port, timeout: 20))
        defer { c.close() }
        #expect(c.request("GET", "/thumbnail?url=\(url)&w=50")?.status == 200)
        #expect(daemon.waitForStderr(after: 0, timeout: 10) { $0.contains("warning shared store: reading ") }, "\(daemon.stderr)")
        #expect(!daemon.stderr.contains("s3 source"), "\(daemon.stderr)")
        #expect(!daemon.stderr.contains("a-fleet-key"))
    }
}
