import Foundation
import Testing
@testable import ThumbAPI
import ThumbRender
@testable import ThumbSandbox
@testable import ThumbService
import ThumbTestSupport

/// SPEC §16 through the real daemon: renders run in worker processes
/// spawned from the thumbd binary, and reuse them. What a worker that hangs,
/// crashes, allocates past its cap or tries a forbidden call does is tested from
/// inside such a worker, by a preloaded stand-in for a hijacked decoder
/// (ThumbdTests' HostileWorkerTests): the product has no hook for it.
@Suite(.serialized) struct SandboxIsolationTests {
    private func target(_ origin: TestOrigin, _ path: String, width: Int = 64) -> String {
        "/thumbnail?url=" + origin.url(path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            + "&w=\(width)&format=png"
    }

    private func engine(_ daemon: EndToEndTests.TestDaemon) throws -> SandboxEngine {
        try #require(daemon.service.engine as? SandboxEngine)
    }

    @Test func rendersRunInWorkerProcessesOfTheThumbdBinary() throws {
        try EndToEndTests.withDaemon({ $0.service.workers = 1 }) { daemon, origin in
            let engine = try engine(daemon)
            #expect(engine.executable.hasSuffix("/thumbd"))
            let first = daemon.get(target(origin, "/cat.jpg"))
            #expect(first.status == 200 && first.headers["x-image-width"] == "64")
            // The next render (and the first one's facts, behind it) reuse the idle worker.
            #expect(daemon.get(target(origin, "/cat.jpg", width: 32)).status == 200)
            #expect(engine.counts == EngineCounts(killed: 0, crashed: 0, spawned: 1))
        }
    }
}
