#if canImport(Dispatch)
import Dispatch
#endif

extension Duration {
    /// The duration in seconds, for figures reported as seconds (`/stats`, logs).
    public var inSeconds: Double { self / .seconds(1) }

    /// Whole nanoseconds, clamped to `Int`: what Dispatch's deadlines take.
    public var inNanoseconds: Int {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflow2 { return seconds < 0 ? .min : .max }
        return Int(sum)
    }

    #if canImport(Dispatch)
    /// For Dispatch's own timers (`asyncAfter`, timer sources), which stay on
    /// Dispatch's clock: the I/O drivers convert a `Duration` at the edge.
    public var dispatchInterval: DispatchTimeInterval { .nanoseconds(inNanoseconds) }
    #endif
}
