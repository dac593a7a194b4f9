@testable import ThumbHTTP
import ThumbTestSupport

// Shorthands for tests that drive `ConnectionStateMachine` by hand.

/// An instant `seconds` after the manual clock's zero.
func at(_ seconds: Double) -> ManualClock.Instant { .zero + .seconds(seconds) }

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

func ok(_ text: String) -> HTTPResponse { HTTPResponse(status: 200, body: Array(text.utf8)) }

extension ConnectionStateMachine.Next {
    var isNone: Bool { if case .none = self { true } else { false } }
    var startedRequest: HTTPRequest? { if case .startRequest(let r) = self { r } else { nil } }
    var written: OutgoingResponse? { if case .write(let w) = self { w } else { nil } }
    /// nil unless closing; then whether a pending request is cancelled.
    var closed: Bool? { if case .close(let cancel) = self { cancel } else { nil } }
    /// The bytes asked of the pending-bytes budget, if that is the action.
    var reservedBytes: Int? { if case .reserveRoom(_, let bytes) = self { bytes } else { nil } }
    var isSend: Bool { if case .send = self { true } else { false } }
}
