import ThumbService
import ThumbJSON
/// `/metrics` (SPEC §2): the figures of `/stats` and the request duration
/// histogram in the Prometheus text exposition format, version 0.0.4.
public struct MetricsExposition {
    /// The `Content-Type` of a `/metrics` response.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    static let durationName = "thumbd_request_duration_seconds"

    /// The exposition text for a `/stats` document (`StatisticsReport.json`)
    /// and a duration snapshot. Families come in `/stats` order, the histogram
    /// last; a figure missing from `statistics` is left out, family and all.
    public static func render(statistics: JSONValue, durations: RequestDurationHistogram.Snapshot) -> String {
        var out = ""
        for figure in figures {
            guard let name = figure.name, let value = member(of: statistics, figure.section, figure.field),
                  let samples = samples(name, figure.kind, value) else { continue }
            writeHeader(name, help: figure.help, type: figure.kind == .gauge ? "gauge" : "counter", to: &out)
            for sample in samples { out += sample + "\n" }
        }
        writeDurations(durations, to: &out)
        return out
    }

    private static func samples(_ name: String, _ kind: Kind, _ value: JSONValue) -> [String]? {
        switch kind {
        case .counter, .gauge:
            return format(value).map { [name + " " + $0] }
        case .counterByStatus:
            guard case .object(let members) = value else { return nil }
            return members.compactMap { member in
                format(member.value).map { name + "{status=\"" + escapeLabel(member.key) + "\"} " + $0 }
            }
        case .sumOfByStatus:
            return nil
        }
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

    private static func member(of document: JSONValue, _ section: String?, _ field: String) -> JSONValue? {
        var object = document
        if let section {
            guard let inner = lookup(object, section) else { return nil }
            object = inner
        }
        return lookup(object, field)
    }

    private static func lookup(_ value: JSONValue, _ key: String) -> JSONValue? {
        guard case .object(let members) = value else { return nil }
        return members.first { $0.key == key }?.value
    }

    private static func writeHeader(_ name: String, help: String, type: String, to out: inout String) {
        out += "# HELP " + name + " " + escapeHelp(help) + "\n"
        out += "# TYPE " + name + " " + type + "\n"
    }

    private static func format(_ value: JSONValue) -> String? {
        switch value {
        case .integer(let n): String(n)
        case .number(let d): format(d)
        default: nil
        }
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
