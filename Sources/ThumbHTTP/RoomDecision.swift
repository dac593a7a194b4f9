/// The pending-bytes budget's answer for one response
/// (`PendingResponseLedger.reserve`, HTTPServer.md, Slow readers).
enum RoomDecision: Equatable {
    /// Charged: write it now.
    case write
    /// Not charged yet: wait for `admitted`; close these connections
    /// (stalest first) to make room.
    case wait(evict: [Int])
    /// No room to write it nor to wait: answer `503` and drop the body.
    case refuse
}
