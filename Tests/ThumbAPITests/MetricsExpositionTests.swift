import Foundation
import Testing
import ThumbHTTP
@testable import ThumbAPI
@testable import ThumbJSON
@testable import ThumbService

// MARK: - A strict reader of the text format, version 0.0.4

struct Sample {
    let name: String
    let labels: [String: String]
    let value: Double
}

struct Exposition {
    var types: [String: String] = [:]
    var helps: [String: String] = [:]
    /// Families in the order their first line appears.
    var families: [String] = []
    var samples: [Sample] = []

    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    func samples(named name: String) -> [Sample] {
        samples.filter { $0.name == name }
    }
}

struct ExpositionError: Error, CustomStringConvertible {
    let line: Int
    let text: String
    let reason: String
    var description: String { "line \(line): \(reason): \(text.debugDescription)" }
}

private func isFloat(_ s: Substring) -> Bool {
    let pattern = try! Regex(#"[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?|[-+]Inf|NaN"#)
    return (try? pattern.wholeMatch(in: String(s))) != nil
}

private func isMetricName(_ s: Substring) -> Bool {
    guard let first = s.first, first.isASCII, first.isLetter || first == "_" || first == ":" else { return false }
    return s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
}

private func isLabelName(_ s: Substring) -> Bool {
    isMetricName(s) && !s.contains(":")
}

/// Parses `text` and rejects anything the format, or thumbd's own rules, do not allow:
/// every family has one HELP and one TYPE before its samples, its lines are
/// contiguous, counters end in `_total`, histograms have only `_bucket` (with `le`),
/// `_sum` and `_count` samples, and no series appears twice.
func parseExposition(_ text: String) throws -> Exposition {
    var result = Exposition()
    guard text.isEmpty || text.hasSuffix("\n") else { throw ExpositionError(line: 0, text: "", reason: "no final newline") }
    var current: String?
    var finished: Set<String> = []
    var seenSeries: Set<String> = []
    var sampled: Set<String> = []

    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    for (index, line) in lines.enumerated() {
        func fail(_ reason: String) -> ExpositionError { ExpositionError(line: index + 1, text: String(line), reason: reason) }
        func enter(_ family: String) throws {
            guard family != current else { return }
            guard !finished.contains(family) else { throw fail("family \(family) is split") }
            if let current { finished.insert(current) }
            current = family
            if !result.families.contains(family) { result.families.append(family) }
        }

        if line.isEmpty { continue }
        if line.hasPrefix("#") {
            let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
            guard parts.count >= 3, parts[0] == "#", parts[1] == "HELP" || parts[1] == "TYPE" else { throw fail("unknown comment") }
            let name = parts[2]
            guard isMetricName(name) else { throw fail("bad metric name") }
            try enter(String(name))
            guard !sampled.contains(String(name)) else { throw fail("\(parts[1]) after samples") }
            let rest = parts.count == 4 ? String(parts[3]) : ""
            if parts[1] == "HELP" {
                guard result.helps[String(name)] == nil else { throw fail("second HELP") }
                guard !rest.isEmpty else { throw fail("empty HELP") }
                var escaped = false
                for c in rest {
                    if escaped {
                        guard c == "\\" || c == "n" else { throw fail("bad escape in HELP") }
                        escaped = false
                    } else if c == "\\" {
                        escaped = true
                    }
                }
                guard !escaped else { throw fail("dangling backslash in HELP") }
                result.helps[String(name)] = rest
            } else {
                guard result.types[String(name)] == nil else { throw fail("second TYPE") }
                guard ["counter", "gauge", "histogram"].contains(rest) else { throw fail("bad type") }
                if rest == "counter" && !name.hasSuffix("_total") { throw fail("counter without _total") }
                result.types[String(name)] = rest
            }
            continue
        }

        // name{labels} value
        var rest = line[...]
        let nameEnd = rest.firstIndex { $0 == "{" || $0 == " " } ?? rest.endIndex
        let name = rest[..<nameEnd]
        guard isMetricName(name) else { throw fail("bad metric name") }
        rest = rest[nameEnd...]
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                guard let equals = rest.firstIndex(of: "=") else { throw fail("label without =") }
                let labelName = rest[..<equals]
                guard isLabelName(labelName), labels[String(labelName)] == nil else { throw fail("bad or repeated label name") }
                rest = rest[rest.index(after: equals)...]
                guard rest.first == "\"" else { throw fail("unquoted label value") }
                rest = rest.dropFirst()
                var value = ""
                var closed = false
                while let c = rest.first {
                    rest = rest.dropFirst()
                    if c == "\"" { closed = true; break }
                    if c == "\\" {
                        switch rest.first {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: throw fail("bad escape in label value")
                        }
                        rest = rest.dropFirst()
                    } else {
                        value.append(c)
                    }
                }
                guard closed else { throw fail("unterminated label value") }
                labels[String(labelName)] = value
                if rest.first == "," {
                    rest = rest.dropFirst()
                    guard rest.first != "}" else { throw fail("trailing comma") }
                } else {
                    guard rest.first == "}" else { throw fail("expected , or }") }
                }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { throw fail("no space before value") }
        let valueText = rest.dropFirst()
        guard isFloat(valueText),
              let value = Double(valueText.replacingOccurrences(of: "Inf", with: "inf")) else {
            throw fail("bad value (or a timestamp)")
        }

        let family: String
        if result.types[String(name)] != nil {
            family = String(name)
            guard result.types[family] != "histogram" else { throw fail("bare sample in a histogram family") }
        } else if let suffix = ["_bucket", "_sum", "_count"].first(where: { name.hasSuffix($0) }),
                  case let base = String(name.dropLast(suffix.count)), result.types[base] == "histogram" {
            family = base
            guard (suffix == "_bucket") == (labels["le"] != nil) else { throw fail("le on the wrong sample") }
        } else {
            throw fail("sample without a TYPE before it")
        }
        try enter(family)
        sampled.insert(family)
        let key = String(name) + "|" + labels.sorted { $0.key < $1.key }.map { $0.key + "=" + $0.value }.joined(separator: ",")
        guard seenSeries.insert(key).inserted else { throw fail("series twice") }
        result.samples.append(Sample(name: String(name), labels: labels, value: value))
    }
    guard Set(result.helps.keys) == Set(result.types.keys) else {
        throw ExpositionError(line: 0, text: "", reason: "HELP and TYPE name different families")
    }
    return result
}

// MARK: - Fixtures

/// A daemon some hours in: every figure distinct, so a figure read from the
/// wrong field cannot pass.
private func busyReport() -> StatisticsReport {
    var counters = ServiceCounters()
    counters.memoryHits = 1234
    counters.memoryMisses = 321
    counters.originFetches = 88
    counters.originFailures = 7
    counters.originBytes = 45_678_901
    counters.originInFlight = 3
    counters.originCoalesced = 19
    counters.renderCompleted = 300
    counters.renderFailures = 4
    counters.renderCoalesced = 11
    counters.renderRejected = 2
    counters.renderAbandoned = 13
    var server = ServerStatistics()
    server.connectionsOpen = 9
    server.connectionsAccepted = 5000
    server.requestsTotal = 1710
    server.requestsActive = 6
    server.byStatus = [200: 1500, 304: 120, 400: 11, 404: 77, 503: 2]
    server.pendingResponseBytesWaiting = 16_777_216
    let service = ServiceStatistics(
        memory: .init(entries: 42, bytes: 12_582_912, limitBytes: 268_435_456, insertions: 57, evictions: 15),
        disk: DiskStore.Statistics(entries: 80, bytes: 987_654_321, limitBytes: 10_737_418_240, hits: 233, misses: 88,
                                   evictions: 8, revalidations: 5, writeFailures: 3),
        counters: counters,
        render: RenderQueue.Statistics(active: 2, queued: 5, memoryInUse: 1_000_000))
    return StatisticsReport(
        uptimeSeconds: 12345.67, service: service,
        prefetch: Prefetcher.Statistics(accepted: 2500, queued: 640, running: 4, completed: 1800, failures: 56),
        server: server)
}

/// Name, type and value of every figure in `busyReport`, written out by hand.
private let expectedFigures: [(name: String, type: String, value: Double)] = [
    ("thumbd_uptime_seconds", "gauge", 12345.7),
    ("thumbd_memory_cache_entries", "gauge", 42),
    ("thumbd_memory_cache_bytes", "gauge", 12_582_912),
    ("thumbd_memory_cache_limit_bytes", "gauge", 268_435_456),
    ("thumbd_memory_cache_hits_total", "counter", 1234),
    ("thumbd_memory_cache_misses_total", "counter", 321),
    ("thumbd_memory_cache_insertions_total", "counter", 57),
    ("thumbd_memory_cache_evictions_total", "counter", 15),
    ("thumbd_disk_store_entries", "gauge", 80),
    ("thumbd_disk_store_bytes", "gauge", 987_654_321),
    ("thumbd_disk_store_limit_bytes", "gauge", 10_737_418_240),
    ("thumbd_disk_store_hits_total", "counter", 233),
    ("thumbd_disk_store_misses_total", "counter", 88),
    ("thumbd_disk_store_evictions_total", "counter", 8),
    ("thumbd_disk_store_revalidations_total", "counter", 5),
    ("thumbd_disk_store_write_failures_total", "counter", 3),
    ("thumbd_origin_fetches_total", "counter", 88),
    ("thumbd_origin_failures_total", "counter", 7),
    ("thumbd_origin_bytes_total", "counter", 45_678_901),
    ("thumbd_origin_in_flight", "gauge", 3),
    ("thumbd_origin_coalesced_total", "counter", 19),
    ("thumbd_render_completed_total", "counter", 300),
    ("thumbd_render_failures_total", "counter", 4),
    ("thumbd_render_active", "gauge", 2),
    ("thumbd_render_queued", "gauge", 5),
    ("thumbd_render_rejected_total", "counter", 2),
    ("thumbd_render_coalesced_total", "counter", 11),
    ("thumbd_render_abandoned_total", "counter", 13),
    ("thumbd_render_memory_in_use", "gauge", 1_000_000),
    ("thumbd_requests_active", "gauge", 6),
    ("thumbd_connections_open", "gauge", 9),
    ("thumbd_connections_accepted_total", "counter", 5000),
    ("thumbd_connections_pending_response_bytes_waiting", "gauge", 16_777_216),
    ("thumbd_prefetch_accepted_total", "counter", 2500),
    ("thumbd_prefetch_queued", "gauge", 640),
    ("thumbd_prefetch_running", "gauge", 4),
    ("thumbd_prefetch_completed_total", "counter", 1800),
    ("thumbd_prefetch_failures_total", "counter", 56),
]

private let bucketBounds = ["0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5",
                            "1", "2.5", "5", "10"]

private func buckets(_ exposition: Exposition, _ outcome: String) -> [(le: String, count: Double)] {
    exposition.samples(named: "thumbd_request_duration_seconds_bucket")
        .filter { $0.labels["outcome"] == outcome }
        .map { ($0.labels["le"]!, $0.value) }
}

// MARK: - Tests

@Suite struct MetricsExpositionTests {
    @Test func contentTypeIsTheVersion004TextFormat() {
        #expect(MetricsExposition.contentType == "text/plain; version=0.0.4; charset=utf-8")
    }

    /// The validator is only worth something if it says no.
    @Test(arguments: [
        ("# TYPE a_total counter\na_total 1", "no final newline"),
        ("a_total 1\n", "without a TYPE"),
        ("# HELP a_total x\n# TYPE a_total counter\n# TYPE a_total counter\na_total 1\n", "second TYPE"),
        ("# HELP a x\n# TYPE a counter\na 1\n", "counter without _total"),
        ("# HELP a x\n# TYPE a gauge\na 1\n# HELP b x\n# TYPE b gauge\nb 1\na{x=\"1\"} 2\n", "is split"),
        ("# HELP a x\n# TYPE a gauge\na{x=\"1\"} 2\n# HELP a y\n", "HELP after samples"),
        ("# HELP 1a x\n# TYPE 1a gauge\n1a 1\n", "bad metric name"),
        ("# HELP a x\n# TYPE a gauge\na{x=\"a\"b\"} 1\n", "expected , or }"),
        ("# HELP a x\n# TYPE a gauge\na{x=\"a\\tb\"} 1\n", "bad escape in label"),
        ("# HELP a x\n# TYPE a gauge\na{x=\"1\",} 1\n", "trailing comma"),
        ("# HELP a x\n# TYPE a gauge\na 1\na 2\n", "series twice"),
        ("# HELP a x\n# TYPE a gauge\na inf\n", "bad value"),
        ("# HELP a x\n# TYPE a gauge\na 1 1700000000\n", "bad value"),
        ("# HELP a x\n# TYPE a summary\na 1\n", "bad type"),
        ("# HELP h x\n# TYPE h histogram\nh_bucket 1\n", "le on the wrong"),
        ("# HELP h x\n# TYPE h histogram\nh 1\n", "bare sample"),
        ("# TYPE a gauge\na 1\n", "HELP and TYPE"),
    ])
    func theValidatorRejects(_ text: String, _ reason: String) {
        let error = #expect(throws: ExpositionError.self) { try parseExposition(text) }
        #expect(error?.reason.contains(reason) == true, "\(String(describing: error))")
    }

    @Test func theValidatorAcceptsAMinimalExposition() throws {
        let e = try parseExposition("# HELP a_total x \\\\ y\n# TYPE a_total counter\na_total{k=\"v\\\"\",l=\"\"} 1.5e3\n\n")
        #expect(e.value("a_total", ["k": "v\"", "l": ""]) == 1500)
    }

    @Test func everyLineOfARealisticExpositionIsValid() throws {
        let histogram = RequestDurationHistogram()
        histogram.observe(seconds: 0.0003, outcome: .memory)
        histogram.observe(seconds: 1.2, outcome: .origin)
        let text = MetricsExposition.render(figures: busyReport().figures, durations: histogram.snapshot())
        let exposition = try parseExposition(text)

        // 57 plain figures (/stats' own, the connections' limits, prefetch),
        // thumbd_requests_total, the histogram.
        #expect(exposition.families.count == 59)
        #expect(exposition.families.first == "thumbd_uptime_seconds")
        #expect(exposition.families.last == "thumbd_request_duration_seconds")
        #expect(exposition.types["thumbd_requests_total"] == "counter")
        #expect(exposition.types["thumbd_request_duration_seconds"] == "histogram")
        // 57 + 5 statuses + 4 outcomes × (14 bounds + +Inf + _sum + _count)
        #expect(exposition.samples.count == 57 + 5 + 4 * 17)
        #expect(text.contains("\n# TYPE thumbd_shared_store_rejected_total counter\n"))
        #expect(text.contains("\nthumbd_memory_cache_hits_total 1234\n"))
        #expect(text.contains("\nthumbd_request_duration_seconds_bucket{outcome=\"memory\",le=\"0.0005\"} 1\n"))
    }

    @Test func everyFigureHasItsSpecNameTypeAndValue() throws {
        let exposition = try parseExposition(MetricsExposition.render(
            figures: busyReport().figures, durations: RequestDurationHistogram().snapshot()))
        for figure in expectedFigures {
            #expect(exposition.types[figure.name] == figure.type, "\(figure.name)")
            #expect(exposition.value(figure.name) == figure.value, "\(figure.name)")
            #expect(exposition.samples(named: figure.name).count == 1, "\(figure.name)")
        }
    }

    @Test func byStatusIsThumbdRequestsTotalAndSumsToRequestsTotal() throws {
        let exposition = try parseExposition(MetricsExposition.render(
            figures: busyReport().figures, durations: RequestDurationHistogram().snapshot()))
        let perStatus = exposition.samples(named: "thumbd_requests_total")
        #expect(perStatus.map { $0.labels } == ["200", "304", "400", "404", "503"].map { ["status": $0] })
        #expect(exposition.value("thumbd_requests_total", ["status": "200"]) == 1500)
        #expect(exposition.value("thumbd_requests_total", ["status": "404"]) == 77)
        #expect(exposition.value("thumbd_requests_total", ["status": "503"]) == 2)
        // requests.total is not a series of its own: no unlabelled sample, and the sum is the figure.
        #expect(exposition.value("thumbd_requests_total") == nil)
        #expect(!exposition.samples.contains { $0.name.hasPrefix("thumbd_requests_total_") })
        #expect(perStatus.reduce(0) { $0 + $1.value } == 1710)
    }

    @Test func theFigureTableCoversExactlyTheFiguresOfStats() {
        guard case .object(let top) = busyReport().json else { Issue.record("/stats is not an object"); return }
        var paths: [String] = []
        for member in top {
            if case .object(let fields) = member.value {
                paths += fields.map { member.key + "." + $0.key }
            } else {
                paths.append(member.key)
            }
        }
        let table = busyReport().figures.map { ($0.section.map { $0 + "." } ?? "") + $0.field }
        #expect(table == paths)
        #expect(paths.count == 59)
        #expect(paths.contains("render.killed") && paths.contains("render.crashed"))
        #expect(["hits", "misses", "writes", "writeFailures", "readFailures", "rejected"].allSatisfy { paths.contains("sharedStore." + $0) })
        #expect(paths.contains("info.requests") && paths.contains("info.batchItems") && paths.contains("info.computed")
                && paths.contains("info.abandoned") && paths.contains("info.streamed"))
        #expect(paths.contains("quality.autoSearches"))
    }

    @Test func labelValuesAndHelpAreEscaped() throws {
        let awkward = "a\"b\\c\nd"
        let figure = MetricsExposition.Figure(section: "requests", field: "byStatus", kind: .counterByStatus,
                                              help: "Responses sent, by status code.", value: .byStatus([(awkward, 3)]))
        let text = MetricsExposition.render(figures: [figure], durations: RequestDurationHistogram().snapshot())
        #expect(text.contains(#"thumbd_requests_total{status="a\"b\\c\nd"} 3"#))
        let exposition = try parseExposition(text)
        #expect(exposition.value("thumbd_requests_total", ["status": awkward]) == 3)
        #expect(MetricsExposition.escapeHelp("a\\b\nc\"") == #"a\\b\nc""#)
    }

    @Test func onlyTheFiguresGivenAreExposed() throws {
        let hits = MetricsExposition.Figure(section: "memoryCache", field: "hits", kind: .counter, help: "h",
                                            value: .integer(5))
        let exposition = try parseExposition(MetricsExposition.render(
            figures: [hits], durations: RequestDurationHistogram().snapshot()))
        #expect(exposition.families == ["thumbd_memory_cache_hits_total", "thumbd_request_duration_seconds"])
        #expect(exposition.value("thumbd_memory_cache_hits_total") == 5)
    }

    @Test func numbersUseGoFloatSpellings() {
        #expect(MetricsExposition.format(1) == "1")
        #expect(MetricsExposition.format(10) == "10")
        #expect(MetricsExposition.format(0.0005) == "0.0005")
        #expect(MetricsExposition.format(2.5) == "2.5")
        #expect(MetricsExposition.format(-0.0) == "0")
        #expect(MetricsExposition.format(.infinity) == "+Inf")
        #expect(MetricsExposition.format(-.infinity) == "-Inf")
        #expect(MetricsExposition.format(.nan) == "NaN")
        #expect(MetricsExposition.format(1e20) == "1e+20")
    }

    @Test func outcomeFollowsXCache() {
        #expect(RequestDurationHistogram.Outcome(xCache: "memory") == .memory)
        #expect(RequestDurationHistogram.Outcome(xCache: "disk") == .disk)
        #expect(RequestDurationHistogram.Outcome(xCache: "origin") == .origin)
        #expect(RequestDurationHistogram.Outcome(xCache: nil) == RequestDurationHistogram.Outcome.none)
        #expect(RequestDurationHistogram.Outcome(xCache: "MEMORY") == RequestDurationHistogram.Outcome.none)
        #expect(RequestDurationHistogram.Outcome(CacheOutcome.disk) == .disk)
        #expect(RequestDurationHistogram.Outcome(nil as CacheOutcome?) == RequestDurationHistogram.Outcome.none)
    }

    @Test func histogramBucketsAreCumulativeAndMatchTheObservations() throws {
        let histogram = RequestDurationHistogram()
        for s in [0.0003, 0.005, 0.004, 0.2] { histogram.observe(seconds: s, outcome: .memory) }
        histogram.observe(seconds: 0.03, outcome: .disk)
        for s in [1.7, 12] { histogram.observe(seconds: s, outcome: .origin) }
        // A negative duration counts as 0; non-finite ones are dropped.
        for s in [-1, .nan, .infinity] { histogram.observe(seconds: s, outcome: .none) }

        let expected: [(outcome: String, counts: [Double], count: Double, sum: Double)] = [
            ("memory", [1, 1, 1, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4], 4, 0.2093),
            ("disk", [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1], 1, 0.03),
            ("origin", [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1], 2, 13.7),
            ("none", [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], 1, 0),
        ]
        let snapshot = histogram.snapshot()
        let exposition = try parseExposition(MetricsExposition.render(figures: [], durations: snapshot))
        #expect(exposition.families == ["thumbd_request_duration_seconds"])
        for e in expected {
            let series = snapshot[RequestDurationHistogram.Outcome(rawValue: e.outcome)!]
            #expect(series.cumulativeCounts.map(Double.init) == e.counts, "\(e.outcome)")
            #expect(Double(series.count) == e.count, "\(e.outcome)")

            let exposed = buckets(exposition, e.outcome)
            #expect(exposed.map(\.le) == bucketBounds + ["+Inf"], "\(e.outcome)")
            #expect(exposed.map(\.count) == e.counts + [e.count], "\(e.outcome)")
            #expect(zip(exposed, exposed.dropFirst()).allSatisfy { $0.count <= $1.count }, "\(e.outcome)")
            let labels = ["outcome": e.outcome]
            #expect(exposition.value("thumbd_request_duration_seconds_count", labels) == e.count, "\(e.outcome)")
            #expect(exposed.last?.count == exposition.value("thumbd_request_duration_seconds_count", labels))
            let sum = try #require(exposition.value("thumbd_request_duration_seconds_sum", labels))
            #expect(abs(sum - e.sum) < 1e-12, "\(e.outcome): \(sum)")
        }
    }

    @Test func concurrentObservationsAreAllCounted() {
        let histogram = RequestDurationHistogram()
        let outcomes = RequestDurationHistogram.Outcome.allCases
        let done = DispatchSemaphore(value: 0)
        for t in 0..<8 {
            Thread {
                // Dyadic durations: the sum is exact whatever order the threads add in.
                for i in 0..<10_000 {
                    histogram.observe(seconds: i % 2 == 0 ? 0.5 : 0.0078125, outcome: outcomes[(t + i) % 4])
                }
                done.signal()
            }.start()
        }
        for _ in 0..<8 { done.wait() }

        let snapshot = histogram.snapshot()
        #expect(outcomes.reduce(0) { $0 + snapshot[$1].count } == 80_000)
        for outcome in outcomes {
            let series = snapshot[outcome]
            #expect(series.count == 20_000, "\(outcome)")
            #expect(series.sum == 5078.125, "\(outcome)")
            #expect(series.cumulativeCounts[4] == 10_000, "\(outcome) le=0.01")
            #expect(series.cumulativeCounts[8] == 10_000, "\(outcome) le=0.25")
            #expect(series.cumulativeCounts[9] == 20_000, "\(outcome) le=0.5")
        }
    }
}
