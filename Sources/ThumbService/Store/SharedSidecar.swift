import ThumbJSON

/// The small JSON object beside an original in the shared store
/// (SeveralInstances.md): what the local disk store keeps in its trailer
/// (`OriginalMetadata`: source URL, validators, fetch time, digest, the
/// address it came from) and the `/info` facts once they are known.
///
/// It is written after the original's object, so an instance that finds
/// it finds the bytes too; the bytes are checked against its digest before
/// anything is served, so a sidecar that outlived its object, or a copy cut
/// short, is a miss and never a wrong image.
struct SharedSidecar: Equatable, Sendable {
    /// Sidecars of another version are ignored (a miss), never misread.
    static let version = 1
    /// A sidecar is a few hundred bytes; more is not ours.
    static let maxBytes = 16 * 1024

    var metadata: OriginalMetadata
    /// Facts of these bytes (same digest), or nil.
    var facts: OriginalFacts?

    init(metadata: OriginalMetadata, facts: OriginalFacts?) {
        self.metadata = metadata
        self.facts = facts.flatMap { $0.sha256 == metadata.sha256 ? $0 : nil }
    }

    var serialized: [UInt8] {
        Array(JSONValue.object([
            ("version", .integer(Self.version)),
            ("metadata", metadata.json),
            ("facts", facts?.json ?? .null),
        ]).serialized().utf8)
    }

    /// Nil unless it is a whole sidecar of this version; facts that do not
    /// parse or belong to other bytes are dropped (they are computed again).
    static func parse(_ bytes: [UInt8]) -> SharedSidecar? {
        guard bytes.count <= maxBytes, case .object(let members)? = try? JSONParser.parse(bytes) else { return nil }
        var fields: [String: JSONValue] = [:]
        for (k, v) in members { fields[k] = v }
        guard case .integer(Self.version)? = fields["version"], let m = fields["metadata"],
              let metadata = OriginalMetadata(json: m) else { return nil }
        return SharedSidecar(metadata: metadata, facts: fields["facts"].flatMap(OriginalFacts.init(json:)))
    }
}
