import ThumbService
import ThumbJSON
import ThumbHTTP

/// `/stats` (Statistics.md): every figure, with exactly the field names of the contract.
struct StatisticsReport {
    typealias Figure = MetricsExposition.Figure

    let uptimeSeconds: Double
    let service: ServiceStatistics
    let prefetch: Prefetcher.Statistics
    let server: ServerStatistics

    /// Every figure of `/stats`, in order, with its value: the one table both
    /// `/stats` and `/metrics` are written from, so neither can miss a figure.
    var figures: [Figure] {
        let m = service.memory, d = service.disk, c = service.counters, r = service.render, sh = service.shared
        return [
            Figure(section: nil, field: "uptimeSeconds", kind: .gauge, help: "Seconds since the service started.",
                   value: .number((uptimeSeconds * 10).rounded() / 10)),

            Figure(section: "memoryCache", field: "entries", kind: .gauge, help: "Prepared variants held in memory.",
                   value: .integer(m.entries)),
            Figure(section: "memoryCache", field: "bytes", kind: .gauge, help: "Bytes held by the memory cache.",
                   value: .integer(m.bytes)),
            Figure(section: "memoryCache", field: "limitBytes", kind: .gauge, help: "Configured memory cache limit in bytes.",
                   value: .integer(m.limitBytes)),
            Figure(section: "memoryCache", field: "hits", kind: .counter, help: "Thumbnail requests answered from memory.",
                   value: .integer(c.memoryHits)),
            Figure(section: "memoryCache", field: "misses", kind: .counter, help: "Thumbnail requests not answered from memory.",
                   value: .integer(c.memoryMisses)),
            Figure(section: "memoryCache", field: "insertions", kind: .counter, help: "Entries put into the memory cache.",
                   value: .integer(m.insertions)),
            Figure(section: "memoryCache", field: "evictions", kind: .counter, help: "Entries evicted from the memory cache.",
                   value: .integer(m.evictions)),

            Figure(section: "diskStore", field: "entries", kind: .gauge, help: "Originals kept on disk.",
                   value: .integer(d.entries)),
            Figure(section: "diskStore", field: "bytes", kind: .gauge, help: "Bytes of originals kept on disk.",
                   value: .integer(d.bytes)),
            Figure(section: "diskStore", field: "limitBytes", kind: .gauge, help: "Configured disk store limit in bytes.",
                   value: .integer(d.limitBytes)),
            Figure(section: "diskStore", field: "hits", kind: .counter, help: "Originals found on disk.",
                   value: .integer(d.hits)),
            Figure(section: "diskStore", field: "misses", kind: .counter, help: "Originals not found on disk.",
                   value: .integer(d.misses)),
            Figure(section: "diskStore", field: "evictions", kind: .counter, help: "Originals evicted from disk.",
                   value: .integer(d.evictions)),
            Figure(section: "diskStore", field: "revalidations", kind: .counter, help: "Originals on disk revalidated with the origin.",
                   value: .integer(d.revalidations)),
            Figure(section: "diskStore", field: "writeFailures", kind: .counter,
                   help: "Originals served but not kept on disk because a write failed.",
                   value: .integer(d.writeFailures)),

            Figure(section: "origin", field: "fetches", kind: .counter, help: "Downloads of originals started.",
                   value: .integer(c.originFetches)),
            Figure(section: "origin", field: "failures", kind: .counter, help: "Downloads of originals that failed.",
                   value: .integer(c.originFailures)),
            Figure(section: "origin", field: "bytes", kind: .counter, help: "Bytes downloaded from origins.",
                   value: .integer(c.originBytes)),
            Figure(section: "origin", field: "inFlight", kind: .gauge, help: "Downloads in progress.",
                   value: .integer(c.originInFlight)),
            Figure(section: "origin", field: "coalesced", kind: .counter, help: "Requests that joined a download already in flight.",
                   value: .integer(c.originCoalesced)),

            Figure(section: "render", field: "completed", kind: .counter, help: "Renders completed.",
                   value: .integer(c.renderCompleted)),
            Figure(section: "render", field: "failures", kind: .counter, help: "Renders that failed.",
                   value: .integer(c.renderFailures)),
            Figure(section: "render", field: "active", kind: .gauge, help: "Renders running on worker threads.",
                   value: .integer(r.active)),
            Figure(section: "render", field: "queued", kind: .gauge, help: "Renders waiting for a worker.",
                   value: .integer(r.queued)),
            Figure(section: "render", field: "rejected", kind: .counter, help: "Requests refused with 503 because the render queue was full.",
                   value: .integer(c.renderRejected)),
            Figure(section: "render", field: "coalesced", kind: .counter, help: "Requests that joined a render already in flight.",
                   value: .integer(c.renderCoalesced)),
            Figure(section: "render", field: "abandoned", kind: .counter,
                   help: "Renders skipped without decoding because every client waiting for them had gone.",
                   value: .integer(c.renderAbandoned)),
            Figure(section: "render", field: "killed", kind: .counter,
                   help: "Render jobs whose worker process was killed at limits.maxRenderSeconds.",
                   value: .integer(service.engine.killed)),
            Figure(section: "render", field: "crashed", kind: .counter,
                   help: "Render jobs whose worker process died (a decoder crashed or ran out of its memory cap).",
                   value: .integer(service.engine.crashed)),
            Figure(section: "render", field: "memoryInUse", kind: .gauge,
                   help: "Estimated decode memory of the renders running now, against limits.maxDecodeMemoryBytes.",
                   value: .integer(r.memoryInUse)),

            Figure(section: "info", field: "requests", kind: .counter, help: "/info requests, a batch counting once.",
                   value: .integer(c.infoRequests)),
            Figure(section: "info", field: "batchItems", kind: .counter, help: "Items of POST /info batches.",
                   value: .integer(c.infoBatchItems)),
            Figure(section: "info", field: "computed", kind: .counter,
                   help: "Originals whose facts were computed from their pixels.",
                   value: .integer(c.factsComputed)),
            Figure(section: "info", field: "abandoned", kind: .counter,
                   help: "Sources of POST /info items whose download or facts job stopped: their batch had answered and nobody else waited.",
                   value: .integer(c.infoAbandoned)),
            Figure(section: "info", field: "streamed", kind: .counter,
                   help: "POST /info batches answered as a stream of lines (application/x-ndjson), one cut short included.",
                   value: .integer(c.infoStreamed)),

            Figure(section: "quality", field: "autoSearches", kind: .counter,
                   help: "q=auto searches run: one per source and lossy format whose q was not known yet.",
                   value: .integer(c.autoSearches)),

            Figure(section: "sharedStore", field: "hits", kind: .counter,
                   help: "Originals found in the shared store after a local disk miss.", value: .integer(sh.hits)),
            Figure(section: "sharedStore", field: "misses", kind: .counter,
                   help: "Shared store look-ups that found no original.", value: .integer(sh.misses)),
            Figure(section: "sharedStore", field: "writes", kind: .counter,
                   help: "Originals written to the shared store (object and sidecar).", value: .integer(sh.writes)),
            Figure(section: "sharedStore", field: "writeFailures", kind: .counter,
                   help: "Shared store writes that failed or were dropped from a full queue.",
                   value: .integer(sh.writeFailures)),
            Figure(section: "sharedStore", field: "readFailures", kind: .counter,
                   help: "Shared store look-ups that failed or took longer than s3.timeoutSeconds (the origin was asked).",
                   value: .integer(sh.readFailures)),
            Figure(section: "sharedStore", field: "rejected", kind: .counter,
                   help: "Shared store sidecars whose mac failed and originals whose bytes did not match (the origin was asked).",
                   value: .integer(sh.rejected)),

            // `requests.total` would be named `thumbd_requests_total` by the rule,
            // the name Statistics.md § /metrics gives the per-status series. One family with an
            // unlabelled sample beside the labelled ones double-counts under
            // `sum(thumbd_requests_total)`; a renamed copy is a second name for the
            // same figure. It is left out instead: HTTPServer counts `total` and
            // `byStatus` under one lock for each response, so the total is exactly
            // `sum(thumbd_requests_total)`.
            Figure(section: "requests", field: "total", kind: .sumOfByStatus, help: "",
                   value: .integer(server.requestsTotal)),
            Figure(section: "requests", field: "active", kind: .gauge, help: "Requests being answered.",
                   value: .integer(server.requestsActive)),
            Figure(section: "requests", field: "byStatus", kind: .counterByStatus, help: "Responses sent, by status code.",
                   value: .byStatus(server.byStatus.sorted { $0.key < $1.key }.map { (String($0.key), $0.value) })),

            Figure(section: "connections", field: "open", kind: .gauge, help: "Client connections open.",
                   value: .integer(server.connectionsOpen)),
            Figure(section: "connections", field: "accepted", kind: .counter, help: "Client connections accepted.",
                   value: .integer(server.connectionsAccepted)),
            Figure(section: "connections", field: "sendTimeouts", kind: .counter,
                   help: "Connections closed because their response made no progress for http.sendTimeoutSeconds.",
                   value: .integer(server.sendTimeouts)),
            Figure(section: "connections", field: "closedForRoom", kind: .counter,
                   help: "Stalled connections closed to keep queued responses within http.maxPendingResponseBytes.",
                   value: .integer(server.connectionsClosedForRoom)),
            Figure(section: "connections", field: "acceptFailures", kind: .counter,
                   help: "Accepts that failed for lack of file descriptors or memory.",
                   value: .integer(server.acceptFailures)),
            Figure(section: "connections", field: "pendingResponseBytes", kind: .gauge,
                   help: "Response bytes queued for clients that have not read them yet.",
                   value: .integer(server.pendingResponseBytes)),
            Figure(section: "connections", field: "pendingResponseBytesPeak", kind: .gauge,
                   help: "The most response bytes queued at once since start.",
                   value: .integer(server.pendingResponseBytesPeak)),
            Figure(section: "connections", field: "pendingResponseBytesWaiting", kind: .gauge,
                   help: "Bytes of finished responses waiting for room in http.maxPendingResponseBytes.",
                   value: .integer(server.pendingResponseBytesWaiting)),

            Figure(section: "prefetch", field: "accepted", kind: .counter, help: "Prefetch items accepted.",
                   value: .integer(prefetch.accepted)),
            Figure(section: "prefetch", field: "queued", kind: .gauge, help: "Prefetch items waiting.",
                   value: .integer(prefetch.queued)),
            Figure(section: "prefetch", field: "running", kind: .gauge, help: "Prefetch items in progress.",
                   value: .integer(prefetch.running)),
            Figure(section: "prefetch", field: "completed", kind: .counter, help: "Prefetch items that warmed the caches.",
                   value: .integer(prefetch.completed)),
            Figure(section: "prefetch", field: "failures", kind: .counter, help: "Prefetch items that failed.",
                   value: .integer(prefetch.failures)),
        ]
    }

    /// The `/stats` document: the figures grouped by section, in table order.
    var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        for figure in figures {
            let value = figure.value.json
            guard let section = figure.section else {
                members.append((figure.field, value))
                continue
            }
            if let last = members.indices.last, members[last].key == section, case .object(var fields) = members[last].value {
                fields.append((figure.field, value))
                members[last].value = .object(fields)
            } else {
                members.append((section, .object([(figure.field, value)])))
            }
        }
        return .object(members)
    }
}
