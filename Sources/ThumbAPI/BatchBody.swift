import ThumbJSON
import ThumbService

/// The envelope `POST /prefetch` and `POST /info` share: `{"items": [...]}`
/// and nothing else, at most `maxItems` items (API.md § Prefetch, § /info).
enum BatchBody {
    /// The items, unjudged; `what` names the endpoint in the `400` message.
    static func items(_ body: [UInt8], maxItems: Int, what: String, limitName: String? = nil) throws(ServiceError) -> [JSONValue] {
        let document: JSONValue
        do {
            document = try JSONParser.parse(body)
        } catch {
            throw .badRequest("\(what) body: \(error)")
        }
        guard case .object(let members) = document else { throw .badRequest("\(what) body must be a JSON object") }
        var list: [JSONValue]?
        for (key, value) in members {
            guard key == "items" else { throw .badRequest("\(what) body: unknown field '\(key)'") }
            guard case .array(let array) = value else { throw .badRequest("\(what) body: 'items' must be an array") }
            list = array
        }
        guard let list else { throw .badRequest("\(what) body: missing 'items'") }
        guard list.count <= maxItems else {
            throw .badRequest("\(what) body: \(list.count) items, at most \(maxItems)" + (limitName.map { " (\($0))" } ?? ""))
        }
        return list
    }
}
