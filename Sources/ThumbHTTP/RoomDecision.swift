/// The pending-bytes budget's answer for one response
/// (`PendingResponseLedger.reserve`, HTTPServer.md, Slow readers).
enum RoomDecision: Equatable {
    /// Charged: write it now.
    case write
    /// Not charged yet: wait for `admitted`; close these connections
    /// (stalled for the ledger's `staleAfter`, longest first) to make room.
    /// More may follow as others stall (`nextEviction`).
    case wait(evict: [Int])
    /// No room to write it nor to wait: answer `503` and drop the body.
    case refuse
}
