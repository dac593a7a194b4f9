import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One `POST /info` in flight: its sources, its task, and how many callers
/// still wait for it. Touched only on the client's actor.
final class InfoBatch: @unchecked Sendable {
    let sources: [String]
    var task: Task<[String: Result<ImageInfo, ThumbClientError>], Never>?
    /// Callers waiting that have not been cancelled; the last one to go cancels the request.
    var waiters = 0
    /// Each source's answer as soon as its line came, and who waits for it
    /// (`info(_:onEach:)`, `facts(of:)`): called once, with the line or at the batch's end.
    var delivered: [String: Result<ImageInfo, ThumbClientError>] = [:]
    var listeners: [String: [@Sendable (String, Result<ImageInfo, ThumbClientError>) -> Void]] = [:]

    init(sources: [String]) { self.sources = sources }
}

/// The lines of one streamed batch by item index, written on the reader's
/// thread in the order they come, read once the body has ended.
final class StreamedItems: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Int: Result<ImageInfo, ThumbClientError>] = [:]

    /// False for an index seen before (the first line counts).
    func put(_ index: Int, _ result: Result<ImageInfo, ThumbClientError>) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard items[index] == nil else { return false }
        items[index] = result
        return true
    }

    subscript(index: Int) -> Result<ImageInfo, ThumbClientError>? {
        lock.lock()
        defer { lock.unlock() }
        return items[index]
    }
}

/// One caller's wait for a batch: ended by the batch's answers, or at once
/// (with nil) by the caller's cancellation, whichever comes first.
final class BatchWait: @unchecked Sendable {
    typealias Answers = [String: Result<ImageInfo, ThumbClientError>]
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Answers?, Never>?
    private var ended = false
    private var outcome: Answers?

    func value() async -> Answers? {
        await withCheckedContinuation { c in
            lock.lock()
            if ended {
                let outcome = outcome
                lock.unlock()
                c.resume(returning: outcome)
            } else {
                continuation = c
                lock.unlock()
            }
        }
    }

    /// The first end counts.
    func end(_ answers: Answers?) {
        lock.lock()
        guard !ended else { return lock.unlock() }
        ended = true
        outcome = answers
        let c = continuation
        continuation = nil
        lock.unlock()
        c?.resume(returning: answers)
    }
}

extension ThumbClient {
    /// The facts of many sources (API.md § /info): split into `POST /info`
    /// batches of at most `maxBatchItems`, at most `maxConcurrentBatches` in
    /// flight; a source already being looked up (by this call or another) is
    /// joined, not asked again. Each source gets its facts or its own error.
    /// Batches are read as streams (API.md § POST /info, Streaming): `onEach`
    /// gets each source's answer the moment its line arrives — a list lays a
    /// row out then, not when the batch's slowest item is done. Cancelling the
    /// calling task ends its wait at once, and cancels the batches no other
    /// caller waits for.
    public func info(_ sources: [String],
                     onEach: (@Sendable (String, Result<ImageInfo, ThumbClientError>) -> Void)? = nil)
        async -> [String: Result<ImageInfo, ThumbClientError>] {
        var seen = Set<String>()
        let unique = sources.filter { seen.insert($0).inserted }
        var waited: [ObjectIdentifier: InfoBatch] = [:]
        var fresh: [String] = []
        for source in unique {
            if let batch = lookups[source] { waited[ObjectIdentifier(batch)] = batch } else { fresh.append(source) }
        }
        for start in stride(from: 0, to: fresh.count, by: configuration.maxBatchItems) {
            let batch = InfoBatch(sources: Array(fresh[start..<min(start + configuration.maxBatchItems, fresh.count)]))
            batch.task = Task { await self.run(batch) }
            for source in batch.sources { lookups[source] = batch }
            waited[ObjectIdentifier(batch)] = batch
        }
        let batches = Array(waited.values)
        for batch in batches { batch.waiters += 1 }
        if let onEach {
            for source in unique {
                guard let batch = lookups[source] else { continue }
                if let known = batch.delivered[source] { onEach(source, known) } else { batch.listeners[source, default: []].append(onEach) }
            }
        }
        // One wait per batch, which this caller's cancellation ends at once, whoever else waits.
        let waits = batches.map { batch in
            let wait = BatchWait()
            Task { wait.end(await batch.task?.value) }
            return (batch, wait)
        }
        return await withTaskCancellationHandler {
            var results: [String: Result<ImageInfo, ThumbClientError>] = [:]
            for (batch, wait) in waits {
                guard let answers = await wait.value() else { continue }
                for source in batch.sources where seen.contains(source) { results[source] = answers[source] }
            }
            for source in unique where results[source] == nil { results[source] = .failure(.cancelled) }
            return results
        } onCancel: {
            for (_, wait) in waits { wait.end(nil) }
            Task { await self.abandon(batches) }
        }
    }

    /// One source's facts as soon as they are known: its line of a batch in
    /// flight (this client's `info` for many sources, a `PrefetchPlanner`'s),
    /// or a batch of its own when none asks for it.
    public func facts(of source: String) async -> Result<ImageInfo, ThumbClientError> {
        if let batch = lookups[source] {
            if let known = batch.delivered[source] { return known }
            return await withCheckedContinuation { c in
                batch.listeners[source, default: []].append { _, result in c.resume(returning: result) }
            }
        }
        return await info([source])[source] ?? .failure(.cancelled)
    }

    /// Hands a source's answer to those waiting for its line, once.
    private func deliver(_ batch: InfoBatch, _ source: String, _ result: Result<ImageInfo, ThumbClientError>) {
        guard batch.delivered[source] == nil else { return }
        batch.delivered[source] = result
        for listener in batch.listeners.removeValue(forKey: source) ?? [] { listener(source, result) }
    }

    /// The facts of one source (one `GET /info`, signed when the client holds the key).
    public func info(_ source: String) async throws(ThumbClientError) -> ImageInfo {
        let (data, response) = try await send(URLRequest(url: try builder.infoURL(source: source)))
        guard response.statusCode == 200 else { throw ThumbClientError.from(status: response.statusCode, body: data) }
        do {
            return try JSONDecoder().decode(ImageInfo.self, from: data)
        } catch {
            throw .malformedAnswer("info answer: \(error)")
        }
    }

    /// A cancelled caller leaves its batches; one nobody waits for any more is cancelled.
    private func abandon(_ batches: [InfoBatch]) {
        for batch in batches {
            batch.waiters -= 1
            if batch.waiters == 0 { batch.task?.cancel() }
        }
    }

    /// Sends one batch when a slot is free, and answers every source in it.
    private func run(_ batch: InfoBatch) async -> [String: Result<ImageInfo, ThumbClientError>] {
        await acquireBatchSlot()
        defer {
            releaseBatchSlot()
            for source in batch.sources where lookups[source] === batch { lookups[source] = nil }
        }
        do throws(ThumbClientError) {
            if Task.isCancelled { throw .cancelled }
            let items: [[String: String]] = batch.sources.map { source in
                var item = ["url": source]
                if let sig = builder.infoItemSignature(source: source) { item["sig"] = sig }
                return item
            }
            infoBatchesSent += 1
            var request = try postRequest("/info", ["items": items])
            request.setValue("application/x-ndjson, application/json;q=0.5", forHTTPHeaderField: "Accept")
            let count = batch.sources.count
            let lines = StreamedItems()
            // On the reader's thread, in the order lines come; handed to the actor (and so to
            // those waiting for one source) at once, each by its own hop.
            let reader = InfoStreamReader { [weak self] line in
                guard let (index, result) = Self.line(line), index >= 0, index < count, lines.put(index, result) else { return }
                Task { await self?.deliver(batch, batch.sources[index], result) }
            }
            let outcome = try await reader.run(request, configuration: session.configuration).get()
            let answers: [Result<ImageInfo, ThumbClientError>]
            if outcome.streamed {
                // An item without its line when the body ended: the transport failed it.
                answers = (0..<count).map { lines[$0] ?? .failure(.transport("the streamed answer ended without item \($0)")) }
            } else {
                guard outcome.status == 200 else { throw ThumbClientError.from(status: outcome.status, body: outcome.body) }
                answers = try Self.items(outcome.body, count: count)
            }
            for (source, answer) in zip(batch.sources, answers) { deliver(batch, source, answer) }
            return Dictionary(uniqueKeysWithValues: zip(batch.sources, answers))
        } catch {
            for source in batch.sources { deliver(batch, source, .failure(error)) }
            return Dictionary(uniqueKeysWithValues: batch.sources.map { ($0, .failure(error)) })
        }
    }

    /// One line of a streamed batch: its item's index, and its facts or error.
    static func line(_ data: Data) -> (Int, Result<ImageInfo, ThumbClientError>)? {
        guard var object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let index = object.removeValue(forKey: "index") as? Int else { return nil }
        return (index, item(object))
    }

    /// A batch answer's items, in order: facts, or the item's own error.
    static func items(_ data: Data, count: Int) throws(ThumbClientError) -> [Result<ImageInfo, ThumbClientError>] {
        guard let top = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let items = top["items"] as? [Any], items.count == count else {
            throw .malformedAnswer("info batch answer without \(count) items")
        }
        return items.map(item)
    }

    /// One item of a batch answer: facts, or the item's own error.
    static func item(_ item: Any) -> Result<ImageInfo, ThumbClientError> {
        guard let object = item as? [String: Any] else { return .failure(.malformedAnswer("an item is not an object")) }
        if let code = object["error"] as? String {
            return .failure(.server(status: ThumbClientError.status(of: code), code: code,
                                    message: object["message"] as? String ?? ""))
        }
        guard let json = try? JSONSerialization.data(withJSONObject: object),
              let info = try? JSONDecoder().decode(ImageInfo.self, from: json) else {
            return .failure(.malformedAnswer("an item is neither facts nor an error"))
        }
        return .success(info)
    }

    private func acquireBatchSlot() async {
        if batchesRunning < configuration.maxConcurrentBatches {
            batchesRunning += 1
            peakBatchesInFlight = max(peakBatchesInFlight, batchesRunning)
            return
        }
        await withCheckedContinuation { batchSlotWaiters.append($0) }
    }

    /// Hands the slot to the next batch waiting, if any.
    private func releaseBatchSlot() {
        guard !batchSlotWaiters.isEmpty else {
            batchesRunning -= 1
            return
        }
        batchSlotWaiters.removeFirst().resume()
    }
}

extension ThumbClientError {
    /// The status thumbd gives an error code (Errors.md), for errors that come inside a batch.
    static func status(of code: String) -> Int {
        switch code {
        case "bad_request": 400
        case "unauthorized": 401
        case "forbidden_source", "bad_signature": 403
        case "not_found", "source_not_found": 404
        case "unsupported_format": 415
        case "source_too_large", "image_too_large", "corrupt_image": 422
        case "origin_error": 502
        case "overloaded": 503
        case "origin_timeout": 504
        default: 500
        }
    }
}
