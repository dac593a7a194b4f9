import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbFetch
@testable import ThumbService

/// The rules of an `s3://` source when it is served from what thumbd holds
/// (S3Sources.md): never the address rules (the endpoint
/// is configuration), and the bucket rules in force after a reload.
@Suite struct S3SourceRulesTests {
    /// A reload that moves the store or drops a bucket drops what memory
    /// holds of s3 sources; the originals on disk are checked as they load.
    @Test func aReloadThatNarrowsTheBucketsRefusesWhatWasStored() throws {
        let dir = NSTemporaryDirectory() + "thumbd-s3-reload-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let disk = try DiskStore(directory: dir, maxBytes: 1 << 30)
        var c = ServiceConfiguration()
        c.s3.endpoint = "http://127.0.0.1:9"
        c.s3.accessKeyId = "id"
        c.s3.secretAccessKey = Secret("s")
        c.s3.allowedBuckets = ["media"]
        let url = "s3://media/a.jpg"
        // An original on disk, fresh, as if fetched a moment ago.
        let sink = disk.newDownload(scratch: NSTemporaryDirectory())
        try sink.write(UnsafeRawBufferPointer(start: TestOrigin.jpeg, count: TestOrigin.jpeg.count))
        let (file, sha) = try sink.finish()
        disk.keep(sink, url: url, metadata: OriginalMetadata(url: url, etag: nil, lastModified: nil,
                                                              fetchedAt: Date().timeIntervalSince1970, length: file.length,
                                                              sha256: sha, address: "127.0.0.1"))
        sink.discard()
        let service = ThumbnailService(configuration: c, fetcher: Fetcher(policy: FetchPolicy(configuration: c)), disk: disk)
        defer { service.renders.shutdown() }
        let request = try ThumbnailRequest(query: [("url", url), ("w", "50")], config: c)
        func answer() -> Result<ThumbnailResult, ServiceError> { ThumbServiceTests.answer(service, request) }
        func failure(_ r: Result<ThumbnailResult, ServiceError>) -> ServiceError? {
            if case .failure(let e) = r { e } else { nil }
        }
        guard case .success(let first) = answer() else { Issue.record("not served from disk"); return }
        #expect(first.cache == .disk, "the address rules do not apply to an s3 original (fetched from 127.0.0.1)")
        guard case .success(let hit) = answer() else { Issue.record("no memory hit"); return }
        #expect(hit.cache == .memory)

        var narrowed = c
        narrowed.s3.allowedBuckets = ["other"]
        service.reload(narrowed)
        #expect(failure(answer()) == .forbiddenSource("bucket media is not in s3.allowedBuckets"))
        var removed = c
        removed.s3 = ServiceConfiguration.S3()
        service.reload(removed)
        #expect(failure(answer()) == .badRequest("s3 sources need s3.endpoint in the configuration"))
    }
}
