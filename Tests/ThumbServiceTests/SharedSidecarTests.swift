import Foundation
import Testing
@testable import ThumbFetch
@testable import ThumbJSON
@testable import ThumbService

/// The shared store's sidecar (SeveralInstances.md): `mac` covers every
/// member, under either of the fleet's keys; anything else is rejected,
/// except an older release's sidecar, which is simply absent.
@Suite struct SharedSidecarTests {
    let first = SharedStoreKey(Array("first-key-0123456789abcdef-0123456789abcdef".utf8))
    let second = SharedStoreKey(Array("second-key-0123456789abcdef-0123456789abcde".utf8))
    let sidecar = SharedSidecar(metadata: OriginalMetadata(url: "https://images.example/a.jpg", etag: "\"v1\"",
                                                           lastModified: nil, fetchedAt: 1_764_390_000.25, length: 2048,
                                                           sha256: String(repeating: "ab", count: 32), address: "93.184.216.34"),
                                facts: nil)

    @Test func aSignedSidecarReadsBackUnderEitherKey() {
        let document = sidecar.signed(with: first)
        #expect(SharedSidecar.read(document, keys: [first]) == .valid(sidecar))
        #expect(SharedSidecar.read(document, keys: [second, first]) == .valid(sidecar), "the key being rotated out still passes")
        #expect(SharedSidecar.read(document, keys: [second]) == .rejected("its mac does not verify under diskStore.shared.keyFile"))
        #expect(String(decoding: document, as: UTF8.self).hasSuffix(#","mac":"\#(SharedSidecar.mac(of: [("version", .integer(2)), ("metadata", sidecar.metadata.json), ("facts", .null)], key: first))"}"#))
    }

    /// Any member changed after signing — the URL, the digest, the size, the
    /// address, the fetch time — or the `mac` removed or doubled, is rejected.
    @Test func everyMemberIsCovered() throws {
        let document = sidecar.signed(with: first)
        guard case .object(let members)? = try? JSONParser.parse(document) else { Issue.record("no object"); return }
        func tampered(_ change: (inout [(key: String, value: JSONValue)]) -> Void) -> [UInt8] {
            var m = members
            change(&m)
            return Array(JSONValue.object(m).serialized().utf8)
        }
        func metadata(_ change: (inout OriginalMetadata) -> Void) -> [UInt8] {
            var changed = sidecar.metadata
            change(&changed)
            return tampered { $0[1].value = changed.json }
        }
        let forged = [
            metadata { $0.url = "https://images.example/b.jpg" },
            metadata { $0.sha256 = String(repeating: "cd", count: 32) },
            metadata { $0.length = 2049 },
            metadata { $0.address = nil },
            metadata { $0.fetchedAt += 86_400 },
            tampered { $0.removeLast() },
            tampered { $0.append((key: "mac", value: $0.last!.value)) },
            tampered { $0[0].value = .integer(3) },
        ]
        for document in forged {
            guard case .rejected = SharedSidecar.read(document, keys: [first]) else {
                Issue.record("accepted \(String(decoding: document, as: UTF8.self))")
                continue
            }
        }
        // The mac covers the content in its canonical serialization, not the document's spacing.
        let spaced = Array(String(decoding: document, as: UTF8.self).replacingOccurrences(of: ",\"", with: ", \"").utf8)
        #expect(spaced != document && SharedSidecar.read(spaced, keys: [first]) == .valid(sidecar))
        for garbage in ["", "[]", "{}", #"{"version": "2"}"#, String(repeating: " ", count: SharedSidecar.maxBytes + 1)] {
            guard case .rejected = SharedSidecar.read(Array(garbage.utf8), keys: [first]) else {
                Issue.record("accepted \(garbage.prefix(40))")
                continue
            }
        }
    }

    /// Version 1 (before `mac`) is an older release's; a newer release's,
    /// signed by the fleet, is one this release does not read: both absent.
    @Test func otherReleasesAreAbsentNotRejected() {
        let old = JSONValue.object([("version", .integer(1)), ("metadata", sidecar.metadata.json), ("facts", .null)])
        #expect(SharedSidecar.read(Array(old.serialized().utf8), keys: [first]) == .otherRelease)
        let members: [(String, JSONValue)] = [("version", .integer(3)), ("metadata", .string("new"))]
        let newer = JSONValue.object(members + [("mac", .string(SharedSidecar.mac(of: members, key: first)))])
        #expect(SharedSidecar.read(Array(newer.serialized().utf8), keys: [first]) == .otherRelease)
    }
}
