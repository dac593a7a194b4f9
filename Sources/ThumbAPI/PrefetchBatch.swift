import ThumbJSON
import ThumbRender
import ThumbService
/// A `POST /prefetch` body (API.md § Prefetch): `{"items": [{...}, ...]}`, each item
/// with the fields and rules of `/thumbnail`. All or nothing: one bad item
/// makes the whole batch a `400` and nothing is queued.
struct PrefetchBatch {
    static let maxItems = 1000

    let items: [ThumbnailRequest]

    init(body: [UInt8], config: ServiceConfiguration) throws(ServiceError) {
        let list = try BatchBody.items(body, maxItems: Self.maxItems, what: "prefetch")
        var items: [ThumbnailRequest] = []
        items.reserveCapacity(list.count)
        for (index, item) in list.enumerated() {
            do throws(ServiceError) {
                items.append(try ThumbnailRequest(query: try Self.parameters(of: item), config: config))
            } catch {
                throw .badRequest("prefetch item \(index): \(error.message)")
            }
        }
        self.items = items
    }

    /// An item as the query parameters `/thumbnail` would receive, after the
    /// JSON type of each field is checked (API.md § Prefetch: strings, integers,
    /// numbers, a boolean; no `sig`). The query's parser then judges the values,
    /// so an item and a query refuse the same things.
    private static func parameters(of item: JSONValue) throws(ServiceError) -> [(name: String, value: String)] {
        guard case .object(let fields) = item else { throw .badRequest("an item must be an object") }
        var query: [(name: String, value: String)] = []
        for (name, value) in fields {
            switch (name, value) {
            case ("url", .string(let s)), ("fit", .string(let s)), ("format", .string(let s)), ("preset", .string(let s)),
                 ("gravity", .string(let s)), ("fp", .string(let s)), ("bg", .string(let s)):
                query.append((name, s))
            // `q` is an integer or "auto" (the query's parser refuses any other string).
            case ("q", .string(let s)) where s == "auto":
                query.append((name, s))
            case ("w", .integer(let n)), ("h", .integer(let n)), ("q", .integer(let n)), ("dpr", .integer(let n)),
                 ("blur", .integer(let n)), ("sharpen", .integer(let n)):
                query.append((name, String(n)))
            case ("blur", .number(let d)), ("sharpen", .number(let d)):
                // A number of tenths becomes the query's spelling; anything
                // finer (2.55) has more digits than the query allows.
                guard let tenths = CompositionParameters.tenths(of: d) else {
                    let rule = name == "blur" ? CompositionParameters.blurRule : CompositionParameters.sharpenRule
                    throw .badRequest("\(name) must be \(rule)")
                }
                query.append((name, CompositionParameters.text(tenths: tenths)))
            case ("enlarge", .bool(let b)), ("animated", .bool(let b)):
                query.append((name, b ? "1" : "0"))
            case ("url", _), ("fit", _), ("format", _), ("preset", _), ("w", _), ("h", _), ("q", _), ("dpr", _),
                 ("enlarge", _), ("gravity", _), ("fp", _), ("bg", _), ("blur", _), ("sharpen", _), ("animated", _):
                throw .badRequest("'\(name)' must not be \(value.typeName)")
            default:
                throw .badRequest("unknown field '\(name)'")
            }
        }
        return query
    }
}
