import Foundation
import Glibc
import Testing
@testable import ThumbAPI
@testable import ThumbImaging
import ThumbRender
@testable import ThumbService
import ThumbTestSupport

/// Configuration.md `diskStore` over HTTP: a daemon whose disk store cannot
/// write answers `200` all the same, also when it starts on a file system
/// that is already full (issue 34 item 4: the attack that filled it got
/// `500 internal_error` for every new source, even after a restart). The
/// store is on a real tmpfs (`SmallFileSystem`: root only; these tests fail
/// with the reason when not root, Testing.md).
@Suite(.serialized) struct DiskStoreFullHTTPTests {
    private typealias TestDaemon = EndToEndTests.TestDaemon

    private func encoded(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }

    private func diskStats(_ daemon: TestDaemon) -> [String: Int] {
        let stats = (try? JSONSerialization.jsonObject(with: Data(daemon.get("/stats").body))) as? [String: Any]
        return stats?["diskStore"] as? [String: Int] ?? [:]
    }

    /// A PNG of `side`² noisy pixels: about `side`²·3 bytes (the RGB does not compress).
    private func noisePNG(side: Int) throws -> [UInt8] {
        var state: UInt32 = 0x9e37_79b9
        let pixels = (0..<side * side * 4).map { i -> UInt8 in
            state = state &* 1_664_525 &+ 1_013_904_223
            return i % 4 == 3 ? 255 : UInt8(truncatingIfNeeded: state >> 24)
        }
        return try ThumbnailPipeline.encode(Bitmap(width: side, height: side, pixels: pixels), format: .png,
                                            quality: 90).bytes
    }

    /// A daemon stops with an original kept; its file system then fills up
    /// (files can still be made: every write fails, the attack's case).
    /// Restarted there, it starts; `/info` answers though the facts cannot
    /// be written; the kept original is served from disk; a source larger
    /// than the file system is served from the origin after the store gave
    /// up what it held, and counts in `writeFailures`, in `/stats` and
    /// `/metrics`. Once no inode is left either, a daemon whose store
    /// directory cannot even be made there starts and serves too. No partial
    /// file is left anywhere.
    @Test func aDaemonRestartedOnAFullStoreStartsAndServes() throws {
        let fs = try SmallFileSystem(bytes: 2 << 20, inodes: 256)
        defer { fs.unmount() }
        let big = try noisePNG(side: 900)
        let origin = try TestOrigin(extraRoutes: ["/big.png": big, "/other.jpg": TestOrigin.jpeg])
        defer { origin.stop() }
        #expect(big.count > 2 << 20, "the large source (\(big.count) bytes) must not fit the file system")
        let store = fs.path + "/store"
        let cat = encoded(origin.url("/cat.jpg"))
        do {
            let first = try TestDaemon(store: store)
            defer { first.stop() }
            let r = first.get("/thumbnail?url=\(cat)&w=100")
            #expect(r.status == 200 && r.headers["x-cache"] == "origin")
        }
        // Its facts go, so that the restarted daemon's /info has to write them.
        for name in regularFiles(under: store) where name.hasSuffix(".facts") { unlink(store + "/" + name) }
        try fs.fill()
        #expect(fs.freeBytes == 0)

        let daemon = try TestDaemon(store: store)
        defer { daemon.stop() }
        let info = daemon.get("/info?url=\(cat)")
        #expect(info.status == 200, "\(String(decoding: info.body, as: UTF8.self))")
        #expect(!regularFiles(under: store).contains { $0.hasSuffix(".facts") }, "facts written on a full store?")
        let held = daemon.get("/thumbnail?url=\(cat)&w=80")
        #expect(held.status == 200 && held.headers["x-cache"] == "disk")

        let large = daemon.get("/thumbnail?url=\(encoded(origin.url("/big.png")))&w=100")
        #expect(large.status == 200 && large.headers["x-cache"] == "origin" && large.headers["x-image-width"] == "100",
                "\(large.status) \(String(decoding: large.body.prefix(300), as: UTF8.self))")
        let stats = diskStats(daemon)
        #expect(stats["writeFailures"] == 1 && stats["evictions"] == 1 && stats["entries"] == 0, "\(stats)")
        let metrics = String(decoding: daemon.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains("\nthumbd_disk_store_write_failures_total 1\n"))
        #expect(regularFiles(under: store).isEmpty, "left in the store: \(regularFiles(under: store))")

        try fs.useUpInodes()
        let fresh = try TestDaemon(store: fs.path + "/fresh")
        defer { fresh.stop() }
        #expect(!FileManager.default.fileExists(atPath: fs.path + "/fresh/tmp"), "no inode was left to make it")
        let other = fresh.get("/thumbnail?url=\(encoded(origin.url("/other.jpg")))&w=100")
        #expect(other.status == 200 && other.headers["x-cache"] == "origin")
        #expect(diskStats(fresh)["writeFailures"] == 1)
    }

    /// A store remounted read-only under a running daemon, and a daemon
    /// restarted on it: originals it holds are served from disk, new ones
    /// from the origin, none is forgotten, nothing is written.
    @Test func aReadOnlyStoreServes() throws {
        let fs = try SmallFileSystem(bytes: 4 << 20)
        defer { fs.unmount() }
        let origin = try TestOrigin(extraRoutes: ["/other.jpg": TestOrigin.jpeg, "/third.jpg": TestOrigin.jpeg])
        defer { origin.stop() }
        let store = fs.path + "/store"
        let cat = encoded(origin.url("/cat.jpg"))
        do {
            let daemon = try TestDaemon(store: store)
            defer { daemon.stop() }
            #expect(daemon.get("/thumbnail?url=\(cat)&w=100").headers["x-cache"] == "origin")
            try fs.remount(readOnly: true)
            let other = daemon.get("/thumbnail?url=\(encoded(origin.url("/other.jpg")))&w=100")
            #expect(other.status == 200 && other.headers["x-cache"] == "origin")
            #expect(diskStats(daemon)["writeFailures"] == 1)
        }
        let daemon = try TestDaemon(store: store)
        defer { daemon.stop() }
        let held = daemon.get("/thumbnail?url=\(cat)&w=90")
        #expect(held.status == 200 && held.headers["x-cache"] == "disk")
        let third = daemon.get("/thumbnail?url=\(encoded(origin.url("/third.jpg")))&w=100")
        #expect(third.status == 200 && third.headers["x-cache"] == "origin")
        let stats = diskStats(daemon)
        #expect(stats["writeFailures"] == 1 && stats["entries"] == 1 && stats["evictions"] == 0, "\(stats)")
        #expect(origin.hits("/cat.jpg") == 1)
    }

    /// The helper itself: a test that stops early (a thrown error, a failed
    /// `#require`) still leaves no mount and no mount point behind.
    @Test func theSmallFileSystemGoesEvenWhenATestStopsEarly() throws {
        struct Stop: Error {}
        var path = ""
        do {
            let fs = try SmallFileSystem(bytes: 1 << 20)
            defer { fs.unmount() }
            path = fs.path
            #expect(SmallFileSystem.isMounted(path))
            let fd = open(path + "/held-open", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            defer { close(fd) }
            throw Stop()
        } catch is Stop {}
        #expect(!path.isEmpty && !SmallFileSystem.isMounted(path) && !FileManager.default.fileExists(atPath: path))
    }
}
