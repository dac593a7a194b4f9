import ThumbFetch
import ThumbJSON
import ThumbRender

/// The small JSON object beside an original in the shared store
/// (SeveralInstances.md): what the local disk store keeps in its trailer
/// (`OriginalMetadata`: source URL, validators, fetch time, digest, the
/// address it came from), the `/info` facts once they are known, and `mac`.
///
/// The store is a cache, not an authority: anyone who can write to the
/// bucket could otherwise put any image under any source, or any facts, or
/// a sidecar without the address the private-network rule needs. `mac` is
/// an HMAC-SHA256 under the fleet's key (`diskStore.shared.keyFile`) over
/// the sidecar's own serialization without `mac`, and it covers everything
/// (URL, digest, size, validators, fetch time, address, facts). The bytes
/// are checked against the digest before anything is served, so a sidecar
/// that outlived its object, a copy cut short or one replaced is never a
/// wrong image.
struct SharedSidecar: Equatable, Sendable {
    /// 1: before `mac` (an older release's: absent, not rejected).
    static let version = 2
    /// A sidecar is a few hundred bytes; more is not ours.
    static let maxBytes = 16 * 1024

    var metadata: OriginalMetadata
    /// Facts of these bytes (same digest), or nil.
    var facts: OriginalFacts?

    init(metadata: OriginalMetadata, facts: OriginalFacts?) {
        self.metadata = metadata
        self.facts = facts.flatMap { $0.sha256 == metadata.sha256 ? $0 : nil }
    }

    /// What a sidecar document turned out to be.
    enum Reading: Equatable, Sendable {
        case valid(SharedSidecar)
        /// An older release's sidecar (no `mac`), or a newer release's
        /// (signed, in a format this one does not read): absent, not counted.
        case otherRelease
        /// Not signed by the fleet (or damaged): absent, counted in `sharedStore.rejected`.
        case rejected(String)
    }

    /// The members that `mac` covers, in the order they are written.
    private var members: [(String, JSONValue)] {
        [("version", .integer(Self.version)), ("metadata", metadata.json), ("facts", facts?.json ?? .null)]
    }

    /// The document, tagged under `key` (the first of the fleet's keys).
    func signed(with key: SharedStoreKey) -> [UInt8] {
        let members = self.members
        let mac = Self.mac(of: members, key: key)
        return Array(JSONValue.object(members + [("mac", .string(mac))]).serialized().utf8)
    }

    /// Hex HMAC-SHA256 of `members` serialized, under `key`.
    static func mac(of members: [(String, JSONValue)], key: SharedStoreKey) -> String {
        Digest.hex(Digest.hmacSHA256(key: key.bytes, message: Array(JSONValue.object(members).serialized().utf8)))
    }

    /// Reads a document: `mac` must verify under one of `keys` over the
    /// other members serialized as they were parsed (a serialization is
    /// canonical: thumbd writes it compactly, in one order, and re-serializing
    /// what it parsed gives the same bytes); then it must be a whole sidecar
    /// of this version. Facts that do not parse or belong to other bytes are
    /// dropped (they are computed again).
    static func read(_ bytes: [UInt8], keys: [SharedStoreKey]) -> Reading {
        guard bytes.count <= maxBytes, case .object(let members)? = try? JSONParser.parse(bytes) else {
            return .rejected("it is not a sidecar")
        }
        var fields: [String: JSONValue] = [:]
        for (k, v) in members { fields[k] = v }
        guard case .integer(let version)? = fields["version"] else { return .rejected("it is not a sidecar") }
        if version < Self.version { return .otherRelease }
        guard case .string(let mac)? = fields["mac"], members.filter({ $0.0 == "mac" }).count == 1 else {
            return .rejected("it carries no mac")
        }
        let covered = members.filter { $0.0 != "mac" }
        guard keys.contains(where: { Self.equal(Array(Self.mac(of: covered, key: $0).utf8), Array(mac.utf8)) }) else {
            return .rejected("its mac does not verify under diskStore.shared.keyFile")
        }
        guard version == Self.version else { return .otherRelease }
        guard let m = fields["metadata"], let metadata = OriginalMetadata(json: m) else {
            return .rejected("its metadata do not parse")
        }
        return .valid(SharedSidecar(metadata: metadata, facts: fields["facts"].flatMap(OriginalFacts.init(json:))))
    }

    /// Comparison whose time does not depend on where the tags differ.
    private static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
