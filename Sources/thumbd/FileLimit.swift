import Glibc

/// Open-file limits: each connection, each download and each original being
/// read holds a descriptor, and the default soft limit (often 1024) is below
/// `http.maxConnections`. systemd's `LimitNOFILE` raises the hard limit; the
/// soft one is ours to raise.
enum FileLimit {
    /// Raises the soft `RLIMIT_NOFILE` to the hard limit; returns the soft
    /// limit now in force (nil if it cannot be read).
    static func raiseToHard() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)   // RLIM_INFINITY (all ones) clamps to Int.max
    }

    /// Descriptors beyond the connections: listeners, the disk store, downloads, logs.
    static let headroom = 256
}
