import Foundation
import Glibc
import Synchronization
import Testing
@testable import ThumbFetch
@testable import ThumbImaging
import ThumbRender
@testable import ThumbService
import ThumbTestSupport

/// Configuration.md `diskStore`: a store that cannot write never fails a
/// request (issue 34 item 4; an attack filled the store's file system and
/// every new source answered `500`). Each test puts the store on a real
/// tmpfs of a few MiB (`SmallFileSystem`, root only: these fail, with the
/// reason, when not root) and fills it or makes it read-only, so the store
/// meets the kernel's own `ENOSPC` and `EROFS`.
@Suite(.serialized) struct DiskStoreFullTests {
    /// A service fetching from loopback with its disk store in `store`.
    private func service(store: String, maxBytes: Int = 100 << 20,
                         report: @escaping @Sendable (String) -> Void = { _ in }) throws -> ThumbnailService {
        var c = ServiceConfiguration()
        c.origin.allowPrivateNetworks = true
        c.limits.maxRenderSeconds = 600
        return ThumbnailService(configuration: c, fetcher: Fetcher(policy: FetchPolicy(configuration: c)),
                                disk: try DiskStore(directory: store, maxBytes: maxBytes, report: report))
    }

    /// The answer to `url` at 50 px wide (bounded wait; nil when none came).
    private func serve(_ s: ThumbnailService, _ url: String) throws -> Result<ThumbnailResult, ServiceError>? {
        let answer = Mutex<Result<ThumbnailResult, ServiceError>?>(nil)
        s.thumbnail(try thumbnailRequest(url)) { result in answer.withLock { $0 = result } }
        _ = eventually(60) { answer.withLock { $0 } != nil }
        return answer.withLock { $0 }
    }

    /// Descriptors still open on a file of the small file system (a
    /// download given up on, a filler).
    private func openFiles(_ fs: SmallFileSystem) -> [String] {
        ProcessDescriptors.targets.filter { $0.hasPrefix(fs.path) }
    }

    private func metadata(_ url: String, _ data: [UInt8]) -> OriginalMetadata {
        OriginalMetadata(url: url, etag: nil, lastModified: nil, fetchedAt: Date().timeIntervalSince1970,
                         length: data.count, sha256: Digest.hex(Digest.sha256(data)))
    }

    /// A PNG of `side`² noisy pixels: about `side`²·3 bytes (the RGB does not compress).
    private static func noisePNG(side: Int) throws -> [UInt8] {
        var state: UInt32 = 0x1234_5678
        let pixels = (0..<side * side * 4).map { i -> UInt8 in
            state = state &* 1_664_525 &+ 1_013_904_223
            return i % 4 == 3 ? 255 : UInt8(truncatingIfNeeded: state >> 24)
        }
        return try ThumbnailPipeline.encode(Bitmap(width: side, height: side, pixels: pixels), format: .png,
                                            quality: 90).bytes
    }

    /// The full file system: a new source is served from the origin, nothing
    /// of it stays in the store, and it counts in `writeFailures`; the
    /// outage is told once. A second source, the same.
    @Test func aFullStoreServesNewSourcesAndKeepsNothing() throws {
        let fs = try SmallFileSystem(bytes: 2 << 20)
        defer { fs.unmount() }
        let origin = try TestOrigin(extraRoutes: ["/other.jpg": TestOrigin.jpeg])
        defer { origin.stop() }
        let reports = Mutex<[String]>([])
        let store = fs.path + "/store"
        let s = try service(store: store) { message in reports.withLock { $0.append(message) } }
        defer { s.renders.shutdown() }
        try fs.fill()
        #expect(fs.freeBytes == 0, "the filler left \(fs.freeBytes) bytes")

        for (n, path) in ["/cat.jpg", "/other.jpg"].enumerated() {
            let answer = try serve(s, origin.url(path))
            guard case .success(let result)? = answer else {
                Issue.record("\(path) on a full store: \(String(describing: answer))"); return
            }
            #expect(result.cache == .origin && result.rendition.width == 50)
            #expect(s.disk?.statistics.writeFailures == n + 1 && s.disk?.statistics.entries == 0)
            #expect(regularFiles(under: store).isEmpty, "a partial file in the store: \(regularFiles(under: store))")
        }
        #expect(reports.withLock { $0 }.count == 1, "\(reports.withLock { $0 })")
        #expect(reports.withLock { $0 }.first?.contains("No space left on device") == true)
        #expect(eventually { openFiles(fs).isEmpty }, "descriptors left open: \(openFiles(fs))")
    }

    /// The file system is full of the store's own originals (the store's
    /// limit is far above what it has): a new source makes room by removing
    /// the least recently used ones, whatever `maxBytes` says, and is kept.
    @Test func aFullStoreRemovesItsOldestOriginalsForANewOne() throws {
        let fs = try SmallFileSystem(bytes: 2 << 20)
        defer { fs.unmount() }
        let origin = try TestOrigin()
        defer { origin.stop() }
        let store = fs.path + "/store"
        let s = try service(store: store)
        defer { s.renders.shutdown() }
        let disk = try #require(s.disk)
        let data = [UInt8](repeating: 7, count: 300_000)
        var kept: [String] = []
        for n in 0..<5 {
            let url = "http://127.0.0.1:9/old-\(n).jpg"
            guard disk.store(url: url, data: data, metadata: metadata(url, data)) else { break }
            kept.append(url)
        }
        #expect(kept.count >= 3, "only \(kept.count) originals of 300 KB fit in 2 MiB")
        try fs.fill()

        guard case .success(let result)? = try serve(s, origin.url("/cat.jpg")) else {
            Issue.record("not served on a full store"); return
        }
        #expect(result.cache == .origin)
        #expect(disk.load(url: origin.url("/cat.jpg")) != nil, "the new original was not kept")
        #expect(disk.load(url: kept[0]) == nil, "the oldest original is still there")
        #expect(try disk.load(url: kept[kept.count - 1]).map { try $0.file.read() } == data,
                "more was removed than the new original needed")
        #expect(disk.statistics.evictions >= 1 && disk.statistics.writeFailures == 0)
        // The original's facts are written through tmp/ by a job after the answer: once it is done,
        // nothing may be left there.
        #expect(eventually(10) { s.renders.statistics == .init() })
        #expect(regularFiles(under: store + "/tmp").isEmpty)
    }

    /// The file system fills while a download streams into the store: the
    /// store gives up every original it has, the download goes on in an
    /// unlinked file of the system's temporary directory with the bytes so
    /// far, and the whole original is served.
    @Test func aDownloadThatOutgrowsTheStoreGoesOnOutsideIt() throws {
        let big = try Self.noisePNG(side: 700)
        let fs = try SmallFileSystem(bytes: 1 << 20)
        defer { fs.unmount() }
        let origin = try TestOrigin(extraRoutes: ["/big.png": big])
        defer { origin.stop() }
        #expect(big.count > 1 << 20, "the source (\(big.count) bytes) must not fit the file system")
        let store = fs.path + "/store"
        let s = try service(store: store)
        defer { s.renders.shutdown() }
        let disk = try #require(s.disk)
        let small = [UInt8](repeating: 1, count: 100_000)
        #expect(disk.store(url: "http://127.0.0.1:9/a.jpg", data: small, metadata: metadata("http://127.0.0.1:9/a.jpg", small)))
        let scratchBefore = Set(try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()))

        let answer = try serve(s, origin.url("/big.png"))
        guard case .success(let result)? = answer else { Issue.record("not served: \(String(describing: answer))"); return }
        #expect(result.cache == .origin && result.rendition.width == 50 && result.rendition.height == 50)
        #expect(disk.statistics.entries == 0 && disk.statistics.evictions == 1 && disk.statistics.writeFailures == 1)
        #expect(regularFiles(under: store).isEmpty, "left in the store: \(regularFiles(under: store))")
        #expect(eventually { openFiles(fs).isEmpty }, "descriptors left open: \(openFiles(fs))")
        let scratchAfter = Set(try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()))
        #expect(scratchAfter.subtracting(scratchBefore).filter { $0.hasPrefix("thumbd-download-") }.isEmpty)
    }

    /// The disk store and the system's temporary directory both full: the
    /// download starts again in memory once the memory it may need
    /// (`limits.maxSourceBytes`) is held of `limits.maxDecodeMemoryBytes`. It
    /// waits while a render leaves no room, is served, counts in
    /// `writeFailures`, and gives the memory back.
    @Test func withNoDiskAtAllADownloadWaitsForMemoryAndIsServedFromIt() throws {
        let storeFS = try SmallFileSystem(bytes: 1 << 20)
        defer { storeFS.unmount() }
        let scratchFS = try SmallFileSystem(bytes: 1 << 20)
        defer { scratchFS.unmount() }
        let origin = try TestOrigin()
        defer { origin.stop() }
        var c = ServiceConfiguration()
        c.origin.allowPrivateNetworks = true
        c.limits.maxRenderSeconds = 600
        c.limits.maxSourceBytes = 4 << 20
        c.limits.maxDecodeMemoryBytes = 64 << 20
        c.workers = 2
        let store = storeFS.path + "/store"
        let s = ThumbnailService(configuration: c, fetcher: Fetcher(policy: FetchPolicy(configuration: c)),
                                 disk: try DiskStore(directory: store, maxBytes: 100 << 20), scratch: scratchFS.path)
        defer { s.renders.shutdown() }
        try storeFS.fill()
        try scratchFS.fill()
        // A render holding all but 2 MiB of the budget: the 4 MiB the download needs wait for it.
        let gate = DispatchSemaphore(value: 0)
        try s.renders.submit(cost: 62 << 20) { gate.wait() }
        #expect(eventually { s.renders.statistics.active == 1 })
        let answer = Mutex<Result<ThumbnailResult, ServiceError>?>(nil)
        s.thumbnail(try thumbnailRequest(origin.url("/cat.jpg"))) { result in answer.withLock { $0 = result } }
        let waited = eventually { s.renders.holds.waiting == 1 }
        #expect(waited, "the download did not wait for memory: \(s.renders.holds), \(String(describing: answer.withLock { $0 }))")
        #expect(answer.withLock { $0 } == nil && origin.hits("/cat.jpg") == 1)
        gate.signal()
        #expect(eventually(60) { answer.withLock { $0 } != nil })
        guard case .success(let result)? = answer.withLock({ $0 }) else {
            Issue.record("not served from memory: \(String(describing: answer.withLock { $0 }))"); return
        }
        #expect(result.cache == .origin && result.rendition.width == 50)
        #expect(origin.hits("/cat.jpg") == 2, "started again in memory")
        #expect(s.disk?.statistics.writeFailures == 1 && s.disk?.statistics.entries == 0)
        #expect(regularFiles(under: store).isEmpty && regularFiles(under: scratchFS.path).count == 1,
                "left: \(regularFiles(under: store)) \(regularFiles(under: scratchFS.path))")
        #expect(eventually { s.renders.holds.bytes == 0 }, "the memory was not given back: \(s.renders.holds)")
    }

    /// A read-only file system: what the store holds is still served from
    /// it (nothing can be removed, so nothing is forgotten), and a new source
    /// is served from the origin without being kept.
    @Test func aReadOnlyStoreServesWhatItHoldsAndNewSources() throws {
        let fs = try SmallFileSystem(bytes: 4 << 20)
        defer { fs.unmount() }
        let origin = try TestOrigin(extraRoutes: ["/other.jpg": TestOrigin.jpeg])
        defer { origin.stop() }
        let store = fs.path + "/store"
        let s = try service(store: store)
        defer { s.renders.shutdown() }
        guard case .success? = try serve(s, origin.url("/cat.jpg")) else { Issue.record("not served"); return }
        try fs.remount(readOnly: true)
        _ = s.memory.removeAll { _ in true }

        guard case .success(let fresh)? = try serve(s, origin.url("/other.jpg")) else {
            Issue.record("a new source on a read-only store was not served"); return
        }
        #expect(fresh.cache == .origin && s.disk?.statistics.writeFailures == 1)
        guard case .success(let held)? = try serve(s, origin.url("/cat.jpg")) else {
            Issue.record("the stored original was not served"); return
        }
        #expect(held.cache == .disk && origin.hits("/cat.jpg") == 1)
        #expect(s.disk?.statistics.entries == 1 && s.disk?.statistics.evictions == 0)
        #expect(regularFiles(under: store + "/tmp").isEmpty)
    }

    /// A store on a full file system, a read-only one, and one out of inodes
    /// opens (the daemon starts) with what it holds, and says why it cannot write.
    @Test func aStoreThatCannotBeWrittenStillOpens() throws {
        let fs = try SmallFileSystem(bytes: 1 << 20, inodes: 64)
        defer { fs.unmount() }
        let held = [UInt8](repeating: 2, count: 50_000)
        let url = "http://127.0.0.1:9/held.jpg"
        do {
            let first = try DiskStore(directory: fs.path + "/kept", maxBytes: 10 << 20)
            #expect(first.store(url: url, data: held, metadata: metadata(url, held)))
        }
        try fs.fill()
        try fs.useUpInodes()
        #expect(fs.freeBytes == 0)
        let reports = Mutex<[String]>([])
        let fresh = try DiskStore(directory: fs.path + "/new", maxBytes: 10 << 20) { m in reports.withLock { $0.append(m) } }
        #expect(fresh.statistics.entries == 0)
        #expect(reports.withLock { $0 }.first?.contains("No space left on device") == true, "\(reports.withLock { $0 })")
        let reopened = try DiskStore(directory: fs.path + "/kept", maxBytes: 10 << 20)
        #expect(try reopened.load(url: url).map { try $0.file.read() } == held)

        try fs.remount(readOnly: true)
        let readOnly = try DiskStore(directory: fs.path + "/kept", maxBytes: 10 << 20)
        #expect(try readOnly.load(url: url).map { try $0.file.read() } == held)
        reports.withLock { $0 = [] }
        _ = try DiskStore(directory: fs.path + "/other", maxBytes: 10 << 20) { m in reports.withLock { $0.append(m) } }
        #expect(reports.withLock { $0 }.first?.contains("Read-only file system") == true, "\(reports.withLock { $0 })")
    }
}
