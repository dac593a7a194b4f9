import ThumbService
import ThumbJSON
import ThumbHTTP

/// `/stats` (SPEC §5): every figure, with exactly the field names of the contract.
struct StatisticsReport {
    let uptimeSeconds: Double
    let service: ServiceStatistics
    let prefetch: Prefetcher.Statistics
    let server: ServerStatistics

    var json: JSONValue {
        let memory = service.memory, d = service.disk, counters = service.counters, render = service.render
        return .object([
            ("uptimeSeconds", .number((uptimeSeconds * 10).rounded() / 10)),
            ("memoryCache", .object([
                ("entries", .integer(memory.entries)), ("bytes", .integer(memory.bytes)),
                ("limitBytes", .integer(memory.limitBytes)), ("hits", .integer(counters.memoryHits)),
                ("misses", .integer(counters.memoryMisses)), ("insertions", .integer(memory.insertions)),
                ("evictions", .integer(memory.evictions)),
            ])),
            ("diskStore", .object([
                ("entries", .integer(d.entries)), ("bytes", .integer(d.bytes)), ("limitBytes", .integer(d.limitBytes)),
                ("hits", .integer(d.hits)), ("misses", .integer(d.misses)), ("evictions", .integer(d.evictions)),
                ("revalidations", .integer(d.revalidations)),
            ])),
            ("origin", .object([
                ("fetches", .integer(counters.originFetches)), ("failures", .integer(counters.originFailures)),
                ("bytes", .integer(counters.originBytes)), ("inFlight", .integer(counters.originInFlight)),
                ("coalesced", .integer(counters.originCoalesced)),
            ])),
            ("render", .object([
                ("completed", .integer(counters.renderCompleted)), ("failures", .integer(counters.renderFailures)),
                ("active", .integer(render.active)), ("queued", .integer(render.queued)),
                ("rejected", .integer(counters.renderRejected)), ("coalesced", .integer(counters.renderCoalesced)),
            ])),
            ("requests", .object([
                ("total", .integer(server.requestsTotal)), ("active", .integer(server.requestsActive)),
                ("byStatus", .object(server.byStatus.sorted { $0.key < $1.key }.map { (String($0.key), .integer($0.value)) })),
            ])),
            ("connections", .object([
                ("open", .integer(server.connectionsOpen)), ("accepted", .integer(server.connectionsAccepted)),
            ])),
            // Beyond SPEC §5's minimum: prefetch failures show nowhere else (§4).
            ("prefetch", .object([
                ("accepted", .integer(prefetch.accepted)), ("queued", .integer(prefetch.queued)),
                ("running", .integer(prefetch.running)), ("completed", .integer(prefetch.completed)),
                ("failures", .integer(prefetch.failures)),
            ])),
        ])
    }
}
