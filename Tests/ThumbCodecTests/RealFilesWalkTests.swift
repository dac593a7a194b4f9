import Foundation
import Testing
import ThumbCodec

/// Real files pass the structure walks (SourcesAndLimits.md § Structure
/// limits: far above what real cameras, phones, editors and encoders write).
@Suite struct RealFilesWalkTests {
    /// Fixtures made to be refused by the walk, and why.
    static let refused: [String: CodecError] = [
        // A tEXt claiming 2 GiB in a 495-byte file (BadInputTests).
        "fuzz/png-huge-chunk.png": .corrupt("PNG chunk extends past the end of the data (truncated)"),
    ]

    /// Every JPEG, PNG and GIF fixture, by its bytes, whatever its name.
    static func files(under root: URL) -> [(name: String, bytes: [UInt8], format: ImageFormat)] {
        let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        var found: [(String, [UInt8], ImageFormat)] = []
        while let url = walker?.nextObject() as? URL {
            guard let data = FileManager.default.contents(atPath: url.path) else { continue }
            let bytes = [UInt8](data)
            guard let format = ImageFormat.sniff(bytes), [.jpeg, .png, .gif].contains(format) else { continue }
            found.append((String(url.path.dropFirst(root.path.count + 1)), bytes, format))
        }
        return found.sorted { $0.0 < $1.0 }
    }

    @Test func everyJPEGPNGAndGIFFixturePasses() throws {
        let files = Self.files(under: Fixtures.root)
        #expect(files.count > 250)
        for format in [ImageFormat.jpeg, .png, .gif] {
            #expect(files.contains { $0.format == format }, "\(format)")
        }
        for file in files {
            do {
                try StructureWalk.check(file.bytes, format: file.format)
                #expect(Self.refused[file.name] == nil, "\(file.name) passed")
            } catch {
                #expect(Self.refused[file.name] == error, "\(file.name): \(error)")
            }
        }
    }

    /// The project's shared corpus of real images (../shared/corpus beside the
    /// repository, as CI has it; THUMBD_CORPUS names another): none refused.
    @Test(.enabled(if: corpus != nil)) func everyCorpusFilePasses() throws {
        let files = Self.files(under: try #require(corpus))
        #expect(files.count > 250)
        for file in files {
            #expect(throws: Never.self, "\(file.name)") { try StructureWalk.check(file.bytes, format: file.format) }
        }
    }
}

private let corpus: URL? = {
    let named = ProcessInfo.processInfo.environment["THUMBD_CORPUS"].map { URL(fileURLWithPath: $0) }
    let beside = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../shared/corpus").standardizedFileURL
    return [named, beside].compactMap { $0 }.first { FileManager.default.fileExists(atPath: $0.path) }
}()
