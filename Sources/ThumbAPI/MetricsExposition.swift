import ThumbService
import ThumbJSON
/// `/metrics` (Statistics.md § /metrics): the figures of `/stats` and the request duration
/// histogram in the Prometheus text exposition format, version 0.0.4.
public struct MetricsExposition {
    /// The `Content-Type` of a `/metrics` response.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    static let durationName = "thumbd_request_duration_seconds"

    /// The exposition text for the figures of `/stats` (`StatisticsReport.figures`)
    /// and a duration snapshot. Families come in table order, the histogram last.
    static func render(figures: [Figure], durations: RequestDurationHistogram.Snapshot) -> String {
        var out = ""
        for figure in figures {
            guard let name = figure.name else { continue }
            writeHeader(name, help: figure.help, type: figure.kind == .gauge ? "gauge" : "counter", to: &out)
            switch figure.value {
            case .integer(let n): out += name + " " + String(n) + "\n"
            case .number(let d): out += name + " " + format(d) + "\n"
            case .byStatus(let counts):
                for (status, count) in counts {
                    out += name + "{status=\"" + escapeLabel(status) + "\"} " + String(count) + "\n"
                }
            }
        }
        writeDurations(durations, to: &out)
        return out
    }

    private static func writeDurations(_ snapshot: RequestDurationHistogram.Snapshot, to out: inout String) {
        let name = durationName
        writeHeader(name, help: "Seconds from request to response, by X-Cache (none: a response without one).",
                    type: "histogram", to: &out)
        for outcome in RequestDurationHistogram.Outcome.allCases {
            let series = snapshot[outcome]
            let label = "outcome=\"" + escapeLabel(outcome.rawValue) + "\""
            for (bound, count) in zip(snapshot.bounds, series.cumulativeCounts) {
                out += name + "_bucket{" + label + ",le=\"" + format(bound) + "\"} " + String(count) + "\n"
            }
            out += name + "_bucket{" + label + ",le=\"+Inf\"} " + String(series.count) + "\n"
            out += name + "_sum{" + label + "} " + format(series.sum) + "\n"
            out += name + "_count{" + label + "} " + String(series.count) + "\n"
        }
    }

    private static func writeHeader(_ name: String, help: String, type: String, to out: inout String) {
        out += "# HELP " + name + " " + escapeHelp(help) + "\n"
        out += "# TYPE " + name + " " + type + "\n"
    }

    /// Go's `ParseFloat` spellings; whole numbers without `.0` so `le="1"`
    /// matches what other exporters write for the same bound.
    static func format(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Inf" : "+Inf" }
        if d == d.rounded(), abs(d) < 1e15 { return String(Int(d)) }
        return "\(d)"
    }

    static func escapeLabel(_ s: String) -> String {
        escape(s, quote: true)
    }

    static func escapeHelp(_ s: String) -> String {
        escape(s, quote: false)
    }

    // The format escapes only these; anything else, UTF-8 included, goes through as is.
    private static func escape(_ s: String, quote: Bool) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\"" where quote: out += "\\\""
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
