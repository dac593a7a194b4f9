// TEMPORARY until the metrics branch merges.
final class RequestDurationHistogram: Sendable {
    struct Snapshot {}
    func observe(seconds: Double, outcome: String) {}
    func snapshot() -> Snapshot { Snapshot() }
}
enum MetricsExposition {
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"
    static func render(stats: JSONValue, durations: RequestDurationHistogram.Snapshot) -> String { "" }
}
