import ThumbFetch
import Foundation
import Synchronization
import Testing
@testable import ThumbService

/// An origin seam serving one real JPEG from the codec fixtures, slowly enough
/// that concurrent requests overlap, counting every fetch.
private final class FixtureOrigin: OriginFetching {
    let body: [UInt8]
    let fetches = Mutex(0)

    init() {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../ThumbCodecTests/Fixtures/rocket.jpg").standardized.path
        body = [UInt8](FileManager.default.contents(atPath: path)!)
    }

    func fetchOriginal(_ source: OriginalSource, conditional: Conditional?, into sink: any BodySink,
                       completion: @escaping @Sendable (Result<FetchResult, ServiceError>) -> Void) {
        fetches.withLock { $0 += 1 }
        let body = body
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) {
            if source.url.hasSuffix("/missing.jpg") { return completion(.failure(.sourceNotFound)) }
            let failure: BodySinkError? = body.withUnsafeBytes { bytes in
                do throws(BodySinkError) { try sink.write(bytes) } catch { return error }
                return nil
            }
            if let failure { return completion(.failure(.internalError(failure.message))) }
            completion(.success(.fetched(length: body.count, etag: "\"v1\"", lastModified: nil, finalURL: source.url, address: nil)))
        }
    }
}

@Suite struct ThumbnailServiceTests {
    private func request(_ url: String, w: Int) throws -> ThumbnailRequest {
        try ThumbnailRequest(query: [("url", url), ("w", String(w))], config: ServiceConfiguration())
    }

    @Test func identicalConcurrentRequestsShareOneDownloadAndOneRender() throws {
        let origin = FixtureOrigin()
        let service = ThumbnailService(configuration: ServiceConfiguration(), fetcher: origin, disk: nil)
        defer { service.renders.shutdown() }
        let r = try request("https://img.example/rocket.jpg", w: 120)
        let results = Mutex<[Result<ThumbnailResult, ServiceError>]>([])
        let group = DispatchGroup()
        // thumbnail() never blocks, so 30 calls in a row are 30 requests in flight at once.
        for _ in 0..<30 {
            group.enter()
            service.thumbnail(r) { result in
                results.withLock { $0.append(result) }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 10) == .success)
        let all = results.withLock { $0 }
        #expect(all.count == 30 && origin.fetches.withLock { $0 } == 1)
        let renditions = all.compactMap { try? $0.get().rendition }
        #expect(renditions.count == 30)
        #expect(Set(renditions.map(\.bytes)).count == 1 && Set(renditions.map(\.etag)).count == 1)
        #expect(renditions[0].width == 120 && renditions[0].height == 80 && renditions[0].contentType == "image/jpeg")
        let c = service.counters.withLock { $0 }
        #expect(c.renderCompleted == 1 && c.renderCoalesced == 29 && c.originFetches == 1)

        // The next identical request is a memory hit; the origin is not asked again.
        let again = try answer(service, r).get()
        #expect(again.cache == .memory && again.rendition.bytes == renditions[0].bytes)
        #expect(origin.fetches.withLock { $0 } == 1)
    }

    @Test func failuresAreRememberedAndPurgeForgetsThem() throws {
        let origin = FixtureOrigin()
        let service = ThumbnailService(configuration: ServiceConfiguration(), fetcher: origin, disk: nil)
        defer { service.renders.shutdown() }
        let missing = try request("https://img.example/missing.jpg", w: 50)
        #expect(throws: ServiceError.sourceNotFound) { try answer(service, missing).get() }
        #expect(throws: ServiceError.sourceNotFound) { try answer(service, missing).get() }
        #expect(origin.fetches.withLock { $0 } == 1, "the second failure was replayed")
        #expect(service.purge("https://img.example/missing.jpg") == 1)
        #expect(throws: ServiceError.sourceNotFound) { try answer(service, missing).get() }
        #expect(origin.fetches.withLock { $0 } == 2)
    }
}
