import Dispatch
import Synchronization
import ThumbJSON
import ThumbService

/// Gathers a `POST /info` batch's answers in the request's order and sends
/// them once (API.md § /info): when the last item is in, or at the batch's
/// deadline, when every item still out becomes `origin_timeout` in its place.
/// Items finish on any thread; none of them holds one while it waits.
final class InfoBatchAnswer: Sendable {
    private struct State {
        var slots: [[UInt8]?]
        var remaining: Int
        var timer: (any DispatchSourceTimer)?
        var sent = false
    }

    private let state: Mutex<State>
    /// Each item's `url` as given, for its error object.
    private let given: [String]
    private let send: @Sendable ([UInt8]) -> Void

    init(given: [String], send: @escaping @Sendable ([UInt8]) -> Void) {
        self.given = given
        self.send = send
        state = Mutex(State(slots: Array(repeating: nil, count: given.count), remaining: given.count))
    }

    /// True once the answer has gone out: an item still running then has
    /// nobody to answer (API.md § /info), unless another request waits for it.
    var hasAnswered: Bool { state.withLock { $0.sent } }

    /// Item `index`'s answer object (serialized); the first one counts.
    func fill(_ index: Int, _ object: [UInt8]) {
        let done = state.withLock { s -> Bool in
            guard !s.sent, s.slots[index] == nil else { return false }
            s.slots[index] = object
            s.remaining -= 1
            return s.remaining == 0
        }
        if done { finish() }
    }

    func fill(_ index: Int, _ result: Result<InfoResult, ServiceError>) {
        switch result {
        case .success(let result): fill(index, InfoAnswer(result.info).body)
        case .failure(let error): fill(index, error: .service(error))
        }
    }

    func fill(_ index: Int, error: APIError) {
        fill(index, Self.errorObject(url: given[index], error))
    }

    /// Sends the answer at once if every item is in (an empty batch, a batch
    /// answered from memory); otherwise arms the deadline `seconds` from now.
    func sendOrWait(seconds: Double) {
        let armed = state.withLock { s -> Bool in
            guard !s.sent, s.remaining > 0 else { return false }
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + seconds)
            timer.setEventHandler { [self] in expire() }
            s.timer = timer
            timer.resume()
            return true
        }
        if !armed { finish() }
    }

    /// The deadline: every item still out times out in its place.
    private func expire() {
        let error = ServiceError.originTimeout("no answer within origin.timeoutSeconds + limits.maxRenderSeconds")
        state.withLock { s in
            guard !s.sent else { return }
            for index in s.slots.indices where s.slots[index] == nil {
                s.slots[index] = Self.errorObject(url: given[index], .service(error))
            }
            s.remaining = 0
        }
        finish()
    }

    /// Sends the items once, and stops the deadline's timer.
    private func finish() {
        let ready: [[UInt8]]? = state.withLock { s in
            guard !s.sent, s.remaining == 0 else { return nil }
            s.sent = true
            s.timer?.cancel()
            s.timer = nil
            return s.slots.map { $0 ?? [] }
        }
        guard let ready else { return }
        var body = Array(#"{"items":["#.utf8)
        body.reserveCapacity(ready.reduce(16) { $0 + $1.count + 1 })
        for (n, object) in ready.enumerated() {
            if n > 0 { body.append(UInt8(ascii: ",")) }
            body += object
        }
        body += Array("]}".utf8)
        send(body)
    }

    static func errorObject(url: String, _ error: APIError) -> [UInt8] {
        Array(JSONValue.object([("url", .string(url)), ("error", .string(error.code)),
                                ("message", .string(error.message))]).serialized().utf8)
    }
}
