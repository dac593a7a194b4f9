import Glibc

/// Where the server listens (Configuration.md `listen`): `HOST:PORT`, `[IPv6]:PORT`,
/// `unix:/path`, or a socket inherited from systemd.
public enum ListenAddress: Equatable, Sendable, CustomStringConvertible {
    case inet(host: String, port: UInt16)
    case unix(path: String)
    /// An already-listening descriptor (socket activation, fd 3).
    case inherited(fd: Int32)

    /// Parses `127.0.0.1:8080`, `[::1]:8080`, `localhost:8080` or
    /// `unix:/run/thumbd.sock`. HOST is an IP literal or `localhost`: a name
    /// would need DNS at start-up. The one parser of `listen`, used by the
    /// config check and at start-up alike.
    public init?(_ text: String) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard !path.isEmpty else { return nil }
            self = .unix(path: path)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard host == "localhost" || Self.isIPLiteral(host) else { return nil }
        self = .inet(host: host, port: port)
    }

    private static func isIPLiteral(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    public var description: String {
        switch self {
        case .inet(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        case .inherited(let fd): "fd:\(fd)"
        }
    }

    /// The socket systemd passed (ServiceLife.md): `LISTEN_FDS=1` and `LISTEN_PID`
    /// equal to our pid mean fd 3 is ours. Pure, so tests can feed it values.
    public static func inherited(listenFDs: String?, listenPID: String?, pid: Int32) -> ListenAddress? {
        guard let fds = listenFDs.flatMap({ Int($0) }), fds >= 1,
              let owner = listenPID.flatMap({ Int32($0) }), owner == pid else { return nil }
        return .inherited(fd: 3)
    }
}
