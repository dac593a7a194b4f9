import Dispatch
import Foundation
import Synchronization
import ThumbHTTP
import ThumbJSON
import ThumbService

/// A streamed `POST /info` answer (API.md § POST /info, Streaming): one line
/// `{"index": I, ...}` per item, written the moment the item is known, then
/// the end of the body. Every item gets exactly one line: at the batch's
/// deadline each item still out is `origin_timeout` in its line, and when the
/// daemon drains (`expire(with:)`) `overloaded`. Items finish on any thread;
/// lines are written under the lock, so the body ends after the last one.
final class InfoStreamAnswer: Sendable {
    private struct State {
        var written: [Bool]
        var remaining: Int
        var timer: (any DispatchSourceTimer)?
        var ended = false
    }

    private let state: Mutex<State>
    /// Each item's `url` as given, for its error line.
    private let given: [String]
    private let stream: ResponseStream
    /// Runs once, after the body's end is queued.
    private let onEnd: @Sendable () -> Void

    init(given: [String], stream: ResponseStream, onEnd: @escaping @Sendable () -> Void) {
        self.given = given
        self.stream = stream
        self.onEnd = onEnd
        state = Mutex(State(written: Array(repeating: false, count: given.count), remaining: given.count))
    }

    /// True once every line is written (the body ended) or the client left:
    /// an item still running then has nobody to answer, unless another request waits for it.
    var isDeserted: Bool { state.withLock { $0.ended } || stream.isCancelled }

    /// Item `index`'s answer object (serialized, `{` first); the first one counts.
    func fill(_ index: Int, _ object: [UInt8]) {
        let done = state.withLock { s -> Bool in
            guard !s.ended, !s.written[index] else { return false }
            s.written[index] = true
            s.remaining -= 1
            stream.write(Self.line(index: index, object))
            return s.remaining == 0
        }
        if done { end() }
    }

    func fill(_ index: Int, _ result: Result<InfoResult, ServiceError>) {
        switch result {
        case .success(let result): fill(index, InfoAnswer(result.info).body)
        case .failure(let error): fill(index, error: .service(error))
        }
    }

    func fill(_ index: Int, error: APIError) {
        fill(index, Self.errorObject(url: given[index], error, index: index))
    }

    /// Ends the body at once when every item is in (a batch answered from
    /// memory); otherwise arms the deadline `seconds` from now.
    func endOrWait(seconds: Double) {
        let armed = state.withLock { s -> Bool in
            guard !s.ended, s.remaining > 0 else { return false }
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + seconds)
            timer.setEventHandler { [self] in
                expire(with: .originTimeout("no answer within origin.timeoutSeconds + limits.maxRenderSeconds"))
            }
            s.timer = timer
            timer.resume()
            return true
        }
        if !armed { end() }
    }

    /// Every item still out gets `error` in its line, and the body ends: the
    /// batch's deadline (`origin_timeout`), or the drain's (`overloaded`).
    func expire(with error: ServiceError) {
        state.withLock { s in
            guard !s.ended else { return }
            for index in s.written.indices where !s.written[index] {
                s.written[index] = true
                stream.write(Self.line(index: index, Self.errorObject(url: given[index], .service(error), index: index)))
            }
            s.remaining = 0
        }
        end()
    }

    /// Ends the body once, and stops the deadline's timer.
    private func end() {
        let ending = state.withLock { s -> Bool in
            guard !s.ended, s.remaining == 0 else { return false }
            s.ended = true
            s.timer?.cancel()
            s.timer = nil
            return true
        }
        guard ending else { return }
        stream.end()
        onEnd()
    }

    /// The most bytes a line takes (API.md § POST /info, Streaming): what a
    /// stream waiting for room holds is at most this per item.
    static let maxLineBytes = 8192

    /// An item's error object, its line within `maxLineBytes`: an absurdly
    /// long `url` as given (over 2048 bytes it is `bad_request` anyway), which
    /// JSON escaping can make up to 6 times longer still, is echoed cut to
    /// what fits, ending in `…`; a message so long too, likewise.
    static func errorObject(url: String, _ error: APIError, index: Int) -> [UInt8] {
        let whole = InfoBatchAnswer.errorObject(url: url, error)
        guard line(index: index, whole).count > maxLineBytes else { return whole }
        func object(_ url: String, _ message: String) -> [UInt8] {
            Array(JSONValue.object([("url", .string(url)), ("error", .string(error.code)),
                                    ("message", .string(message))]).serialized().utf8)
        }
        let message = cut(error.message, toBytes: 1024)
        let fixed = line(index: index, object("", message)).count
        return object(cut(url, toBytes: maxLineBytes - fixed), message)
    }

    /// `text` whole when its JSON string takes at most `budget` bytes (quotes
    /// left out), else its longest prefix of whole scalars that, with `…`, does.
    static func cut(_ text: String, toBytes budget: Int) -> String {
        func cost(_ s: String) -> Int { JSONValue.string(s).serialized().utf8.count - 2 }
        if text.utf8.count <= budget / 6 || cost(text) <= budget { return text }
        let room = budget - cost("…")
        var kept = String.UnicodeScalarView()
        var used = 0
        for scalar in text.unicodeScalars {
            used += cost(String(scalar))
            if used > room { break }
            kept.append(scalar)
        }
        return String(kept) + "…"
    }

    /// `{"index":I,` then the object's fields, and a newline.
    static func line(index: Int, _ object: [UInt8]) -> [UInt8] {
        var line = Array(#"{"index":"#.utf8)
        line.reserveCapacity(object.count + 16)
        line += Array(String(index).utf8)
        if object.count > 2 { line.append(UInt8(ascii: ",")) }
        line += object.dropFirst()
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// Whether a `POST /info` is answered as a stream (API.md § POST /info,
    /// Streaming): HTTP/1.1, and an `Accept` giving `application/x-ndjson` a
    /// q above 0 and at least that of `application/json` (0 when not
    /// listed); wildcards count for neither.
    static func wanted(_ request: HTTPRequest) -> Bool {
        guard request.minorVersion >= 1, let accept = request.combinedHeader("Accept") else { return false }
        var ndjson = 0.0, json = 0.0
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let type = parts.first else { continue }
            var q = 1.0
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                q = Double(parameter.dropFirst(2)).map { min(max($0, 0), 1) } ?? 0
            }
            switch type {
            case "application/x-ndjson": ndjson = max(ndjson, q)
            case "application/json": json = max(json, q)
            default: break
            }
        }
        return ndjson > 0 && ndjson >= json
    }
}
