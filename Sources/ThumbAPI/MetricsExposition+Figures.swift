import ThumbService
import ThumbJSON
extension MetricsExposition {
    /// How one `/stats` figure becomes Prometheus samples.
    enum Kind: Equatable {
        /// Only ever grows since start: `_total` suffix, `counter` type.
        case counter
        /// Goes up and down, or is a setting: no suffix, `gauge` type.
        case gauge
        /// An object of status code → responses: one `counter` family named after
        /// the section alone (`thumbd_requests_total`), one series per key, `status` label.
        case counterByStatus
        /// Not a series of its own; see `requests.total` below.
        case sumOfByStatus
    }

    /// One figure of `/stats`: where it sits in the JSON and how it is exposed.
    struct Figure {
        /// The top-level key, or nil for a top-level figure (`uptimeSeconds`).
        let section: String?
        let field: String
        let kind: Kind
        let help: String

        /// `thumbd_` + section + `_` + field in snake_case, `_total` for counters (SPEC §2).
        var name: String? {
            let section = self.section.map(MetricsExposition.snakeCase)
            let prefix = "thumbd_" + (section.map { $0 + "_" } ?? "")
            switch kind {
            case .counter: return prefix + MetricsExposition.snakeCase(field) + "_total"
            case .gauge: return prefix + MetricsExposition.snakeCase(field)
            case .counterByStatus: return prefix + "total"
            case .sumOfByStatus: return nil
            }
        }
    }

    /// Every figure of SPEC §5, in `/stats` order. A test checks this table
    /// against `StatisticsReport`, so a new `/stats` field cannot silently
    /// miss `/metrics`.
    static let figures: [Figure] = [
        Figure(section: nil, field: "uptimeSeconds", kind: .gauge, help: "Seconds since the service started."),

        Figure(section: "memoryCache", field: "entries", kind: .gauge, help: "Prepared variants held in memory."),
        Figure(section: "memoryCache", field: "bytes", kind: .gauge, help: "Bytes held by the memory cache."),
        Figure(section: "memoryCache", field: "limitBytes", kind: .gauge, help: "Configured memory cache limit in bytes."),
        Figure(section: "memoryCache", field: "hits", kind: .counter, help: "Thumbnail requests answered from memory."),
        Figure(section: "memoryCache", field: "misses", kind: .counter, help: "Thumbnail requests not answered from memory."),
        Figure(section: "memoryCache", field: "insertions", kind: .counter, help: "Entries put into the memory cache."),
        Figure(section: "memoryCache", field: "evictions", kind: .counter, help: "Entries evicted from the memory cache."),

        Figure(section: "diskStore", field: "entries", kind: .gauge, help: "Originals kept on disk."),
        Figure(section: "diskStore", field: "bytes", kind: .gauge, help: "Bytes of originals kept on disk."),
        Figure(section: "diskStore", field: "limitBytes", kind: .gauge, help: "Configured disk store limit in bytes."),
        Figure(section: "diskStore", field: "hits", kind: .counter, help: "Originals found on disk."),
        Figure(section: "diskStore", field: "misses", kind: .counter, help: "Originals not found on disk."),
        Figure(section: "diskStore", field: "evictions", kind: .counter, help: "Originals evicted from disk."),
        Figure(section: "diskStore", field: "revalidations", kind: .counter, help: "Originals on disk revalidated with the origin."),

        Figure(section: "origin", field: "fetches", kind: .counter, help: "Downloads of originals started."),
        Figure(section: "origin", field: "failures", kind: .counter, help: "Downloads of originals that failed."),
        Figure(section: "origin", field: "bytes", kind: .counter, help: "Bytes downloaded from origins."),
        Figure(section: "origin", field: "inFlight", kind: .gauge, help: "Downloads in progress."),
        Figure(section: "origin", field: "coalesced", kind: .counter, help: "Requests that joined a download already in flight."),

        Figure(section: "render", field: "completed", kind: .counter, help: "Renders completed."),
        Figure(section: "render", field: "failures", kind: .counter, help: "Renders that failed."),
        Figure(section: "render", field: "active", kind: .gauge, help: "Renders running on worker threads."),
        Figure(section: "render", field: "queued", kind: .gauge, help: "Renders waiting for a worker."),
        Figure(section: "render", field: "rejected", kind: .counter, help: "Requests refused with 503 because the render queue was full."),
        Figure(section: "render", field: "coalesced", kind: .counter, help: "Requests that joined a render already in flight."),

        // `requests.total` would be named `thumbd_requests_total` by the rule,
        // the name SPEC §2 gives the per-status series. One family with an
        // unlabelled sample beside the labelled ones double-counts under
        // `sum(thumbd_requests_total)`; a renamed copy is a second name for the
        // same figure. It is left out instead: HTTPServer counts `total` and
        // `byStatus` under one lock for each response, so the total is exactly
        // `sum(thumbd_requests_total)`.
        Figure(section: "requests", field: "total", kind: .sumOfByStatus, help: ""),
        Figure(section: "requests", field: "active", kind: .gauge, help: "Requests being answered."),
        Figure(section: "requests", field: "byStatus", kind: .counterByStatus, help: "Responses sent, by status code."),

        Figure(section: "connections", field: "open", kind: .gauge, help: "Client connections open."),
        Figure(section: "connections", field: "accepted", kind: .counter, help: "Client connections accepted."),

        Figure(section: "prefetch", field: "accepted", kind: .counter, help: "Prefetch items accepted."),
        Figure(section: "prefetch", field: "queued", kind: .gauge, help: "Prefetch items waiting."),
        Figure(section: "prefetch", field: "running", kind: .gauge, help: "Prefetch items in progress."),
        Figure(section: "prefetch", field: "completed", kind: .counter, help: "Prefetch items that warmed the caches."),
        Figure(section: "prefetch", field: "failures", kind: .counter, help: "Prefetch items that failed."),
    ]

    /// `memoryCache` → `memory_cache`, `inFlight` → `in_flight`.
    static func snakeCase(_ camel: String) -> String {
        var out = ""
        for character in camel {
            if character.isUppercase {
                if !out.isEmpty { out += "_" }
                out += character.lowercased()
            } else {
                out.append(character)
            }
        }
        return out
    }
}
