import Foundation
import Testing
import ThumbTestSupport

/// SourcesAndLimits.md § Structure limits through the whole service: an AVIF
/// whose structure is past a limit is `422 image_too_large` from the structure
/// walk (no codec library parses it), and the answer is remembered like any
/// other refusal of the source.
@Suite(.serialized) struct StructureLimitTests {
    private static let grid: [UInt8] = [UInt8](FileManager.default.contents(atPath: URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("../ThumbCodecTests/Fixtures/formats/photo-grid.avif")
        .standardized.path)!)

    /// photo-grid.avif with its iinf declaring 65 535 items (it holds 3).
    private static func tooManyItems() throws -> [UInt8] {
        var bytes = grid
        let iinf = try #require((0..<bytes.count - 4).first { Array(bytes[$0..<$0 + 4]) == Array("iinf".utf8) })
        bytes.replaceSubrange(iinf + 8..<iinf + 10, with: [0xFF, 0xFF])
        return bytes
    }

    @Test func anAVIFPastAStructureLimitIs422ImageTooLarge() throws {
        let origin = try TestOrigin(extraRoutes: ["/items.avif": try Self.tooManyItems(), "/grid.avif": Self.grid])
        defer { origin.stop() }
        let dir = NSTemporaryDirectory() + "thumbd-structure-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let daemon = try EndToEndTests.TestDaemon(store: dir)
        defer { daemon.stop() }
        func target(_ path: String, _ width: Int) -> String {
            "/thumbnail?url=\(origin.url(path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&w=\(width)"
        }
        let refused = daemon.get(target("/items.avif", 50))
        #expect(refused.status == 422)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("\"image_too_large\""))
        #expect(String(decoding: refused.body, as: UTF8.self).contains("iinf"), "the walk's message")
        // Remembered: another size of it does not reach the origin again.
        #expect(daemon.get(target("/items.avif", 60)).status == 422)
        #expect(origin.hits("/items.avif") == 1)
        // The sound file it was made from renders.
        let fine = daemon.get(target("/grid.avif", 50))
        #expect(fine.status == 200 && fine.headers["x-image-width"] == "50")
    }
}
