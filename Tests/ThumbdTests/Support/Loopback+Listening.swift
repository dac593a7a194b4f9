import ThumbTestSupport

extension Loopback {
    /// True when something accepts TCP connections on 127.0.0.1:`port` right now.
    static func isListening(_ port: UInt16, timeout: Double = 1) -> Bool {
        guard let c = HTTPConnection(port: port, timeout: timeout) else { return false }
        c.close()
        return true
    }
}
