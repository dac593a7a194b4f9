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

    /// One figure of `/stats`: where it sits in the JSON, how it is exposed, and its value.
    struct Figure {
        /// The top-level key, or nil for a top-level figure (`uptimeSeconds`).
        let section: String?
        let field: String
        let kind: Kind
        let help: String
        let value: Value

        enum Value {
            case integer(Int)
            case number(Double)
            /// Status code → responses, in order.
            case byStatus([(status: String, count: Int)])

            var json: JSONValue {
                switch self {
                case .integer(let n): .integer(n)
                case .number(let d): .number(d)
                case .byStatus(let counts): .object(counts.map { ($0.status, .integer($0.count)) })
                }
            }
        }

        /// `thumbd_` + section + `_` + field in snake_case, `_total` for counters (Statistics.md § /metrics).
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
