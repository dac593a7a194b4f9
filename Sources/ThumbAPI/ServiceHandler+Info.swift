import Dispatch
import ThumbHTTP
import Synchronization
import ThumbService

/// `/info` (API.md § /info): one source by `GET`/`HEAD`, a batch by `POST`.
extension ServiceHandler {
    /// A spelling seen before under this configuration skips the signature,
    /// the parsing and the normalization, and a memory hit of it sends fields
    /// built once, as `/thumbnail` does (`RequestShortcuts`).
    func info(_ request: HTTPRequest, _ responder: Responder) {
        service.countInfoRequest()
        let generation = service.configurationGeneration
        let key = InfoShortcuts.Key(target: request.target, accept: nil)
        let ifNoneMatch = request.header("If-None-Match")
        let parsed: InfoRequest
        if let entry = infoShortcuts.entry(key, generation: generation) {
            if let info = service.cachedInfo(entry.request) {
                let fields = infoShortcuts.fields(key, entry, etag: info.etag, generation: generation) {
                    AnswerFields(info: info.etag, cacheControl: Self.cacheControl(service.config.output))
                }
                return responder.respond(fields.response(body: InfoAnswer(info).body, cache: .memory,
                                                         ifNoneMatch: ifNoneMatch))
            }
            parsed = entry.request
        } else {
            let config = service.config
            // The signature first: an unsigned request learns nothing, not even which parameter is wrong.
            if let key = signingKey, !URLSignature.verify(target: request.target, key: key) {
                return responder.respond(APIError.badSignature.thumbnailResponse(config.output, varies: false))
            }
            do {
                parsed = try InfoRequest(query: request.query, reservedBucket: config.diskStore.shared?.bucket)
            } catch {
                return responder.respond(error.thumbnailResponse(config.output, varies: false))
            }
            infoShortcuts.remember(key, .init(request: parsed, fields: nil), generation: generation)
        }
        service.info(parsed) { [self, service] result in
            let output = service.config.output
            switch result {
            case .failure(let error):
                report(error, request)
                responder.respond(error.thumbnailResponse(output, varies: false))
            case .success(let info):
                let fields = AnswerFields(info: info.info.etag, cacheControl: Self.cacheControl(output))
                responder.respond(fields.response(body: InfoAnswer(info.info).body, cache: info.cache,
                                                  ifNoneMatch: ifNoneMatch))
            }
        }
    }

    /// `POST /info`: always `200` once the body has the right form, each item
    /// its own answer or error; at the latest after `origin.timeoutSeconds`
    /// plus `limits.maxRenderSeconds`.
    func infoBatch(_ request: HTTPRequest, _ responder: Responder) {
        let config = service.config
        let batch: InfoBatch
        do {
            batch = try InfoBatch(body: request.body, maxItems: config.info.maxBatchItems, signingKey: signingKey,
                                  reservedBucket: config.diskStore.shared?.bucket)
        } catch {
            service.countInfoRequest()
            return responder.respond(error.response)
        }
        service.countInfoRequest(batchItems: batch.items.count)
        if InfoStreamAnswer.wanted(request) { return streamBatch(batch, request, responder) }
        let answer = InfoBatchAnswer(given: batch.items.map(\.given)) { body in
            responder.respond(HTTPResponse(status: 200, headers: [("Content-Type", "application/json"),
                                                                  ("Cache-Control", "no-store")], body: body))
        }
        // Once the batch has answered (or its client left), an item's download and facts job stop
        // unless another request waits for the same source.
        let deserted: @Sendable () -> Bool = { answer.hasAnswered || responder.isCancelled }
        for (index, item) in batch.items.enumerated() {
            switch item.request {
            case .failure(let error):
                answer.fill(index, error: error)
            case .success(let parsed):
                if let cached = service.cachedInfo(parsed) {
                    answer.fill(index, InfoAnswer(cached).body)
                } else {
                    service.info(parsed, deserted: deserted) { [self] result in
                        if case .failure(let error) = result { report(error, request) }
                        answer.fill(index, result)
                    }
                }
            }
        }
        answer.sendOrWait(seconds: config.origin.timeoutSeconds + config.limits.maxRenderSeconds)
    }

    /// A batch answered as a stream of lines (API.md § POST /info,
    /// Streaming): what memory knows first, in request order — facts and
    /// remembered failures, and the items' own errors — then each item the
    /// moment it is known; the body ends with the last line, at the latest
    /// at the batch's deadline, or when the daemon drains (`endStreams`).
    private func streamBatch(_ batch: InfoBatch, _ request: HTTPRequest, _ responder: Responder) {
        let config = service.config
        service.countInfoStreamed()
        let stream = responder.stream(HTTPResponse(status: 200, headers: Self.streamHeaders))
        let id = openStreams.withLock { s in
            s.next += 1
            return s.next
        }
        let answer = InfoStreamAnswer(given: batch.items.map(\.given), stream: stream) { [self] in
            openStreams.withLock { _ = $0.answers.removeValue(forKey: id) }
        }
        openStreams.withLock { $0.answers[id] = answer }
        var pending: [(Int, InfoRequest)] = []
        for (index, item) in batch.items.enumerated() {
            switch item.request {
            case .failure(let error): answer.fill(index, error: error)
            case .success(let parsed):
                switch service.rememberedInfo(parsed) {
                case .success(let info)?: answer.fill(index, InfoAnswer(info).body)
                case .failure(let error)?: answer.fill(index, error: .service(error))
                case nil: pending.append((index, parsed))
                }
            }
        }
        // Once every line is written or the client left, an item's download and facts job stop
        // unless another request waits for the same source.
        let deserted: @Sendable () -> Bool = { answer.isDeserted }
        for (index, parsed) in pending {
            service.info(parsed, deserted: deserted) { [self] result in
                if case .failure(let error) = result { report(error, request) }
                answer.fill(index, result)
            }
        }
        answer.endOrWait(seconds: config.origin.timeoutSeconds + config.limits.maxRenderSeconds)
    }

    /// What keeps proxies (nginx's `X-Accel-Buffering`) and clients (content
    /// sniffing) from holding lines back.
    static let streamHeaders: [(name: String, value: String)] = [
        ("Content-Type", "application/x-ndjson"), ("Cache-Control", "no-store"),
        ("X-Accel-Buffering", "no"), ("X-Content-Type-Options", "nosniff"),
    ]

    /// The drain (ServiceLife.md): streamed batches still open after
    /// `seconds` write `overloaded` for each item not yet written and end, so
    /// their bodies end before the server closes what is left.
    public func endStreams(after seconds: Double) {
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0, seconds)) { [self] in
            let open = openStreams.withLock { Array($0.answers.values) }
            for answer in open { answer.expire(with: .overloaded) }
        }
    }
}
