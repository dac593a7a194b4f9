@testable import ThumbHTTP
import ThumbTestSupport

// Shorthands for tests that drive `ConnectionStateMachine` by hand.

/// An instant `seconds` after the manual clock's zero.
func at(_ seconds: Double) -> ManualClock.Instant { .zero + .seconds(seconds) }

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

func ok(_ text: String) -> HTTPResponse { HTTPResponse(status: 200, body: Array(text.utf8)) }

extension ConnectionNext {
    var isNone: Bool { if case .none = self { true } else { false } }
    var startedRequest: HTTPRequest? { if case .startRequest(let r) = self { r } else { nil } }
    var written: OutgoingResponse? { if case .write(let w, _) = self { w } else { nil } }
    /// nil unless closing; then whether a pending request is cancelled.
    var closed: Bool? { if case .close(let cancel) = self { cancel } else { nil } }
    /// Whether a response to write is to be charged to the pending-bytes
    /// budget first (nil: not a write).
    var reservesRoom: Bool? { if case .write(_, let reserve) = self { reserve } else { nil } }
    var isSend: Bool { if case .send = self { true } else { false } }
    var isProbe: Bool { if case .probePeer = self { true } else { false } }
}

extension RoomStep {
    /// What is logged and counted, if anything.
    var record: ResponseRecord? {
        switch self {
        case .send(let r), .wait(let r), .sendRefusal(_, let r): r
        case .none: nil
        }
    }
    var isSend: Bool { if case .send = self { true } else { false } }
    var isWait: Bool { if case .wait = self { true } else { false } }
    var refusal: OutgoingResponse? { if case .sendRefusal(let o, _) = self { o } else { nil } }
}
