import Glibc

/// What a fetch may do (SPEC §6, §8 `origin.*`, `limits.maxSourceBytes`).
public struct FetchPolicy: Sendable {
    public var allowedHosts: [String]
    public var allowPrivateNetworks: Bool
    public var maxRedirects: Int
    public var connectTimeout: Double
    public var totalTimeout: Double
    public var maxBytes: Int

    public init(allowedHosts: [String], allowPrivateNetworks: Bool, maxRedirects: Int,
                connectTimeout: Double, totalTimeout: Double, maxBytes: Int) {
        self.allowedHosts = allowedHosts
        self.allowPrivateNetworks = allowPrivateNetworks
        self.maxRedirects = maxRedirects
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.maxBytes = maxBytes
    }

    /// The host rule, applied to the first URL and every redirect target.
    public func checkHost(_ url: SourceURL) throws(FetchError) {
        guard HostPattern.allows(url.host, patterns: allowedHosts) else {
            throw .forbidden("host \(url.host) is not in origin.allowedHosts")
        }
    }

    /// The address rule, applied to the address actually connected to.
    public func checkAddress(_ address: IPAddress) throws(FetchError) {
        guard allowPrivateNetworks || AddressClassifier.isPublic(address) else {
            throw .forbidden("source address \(address) is \(AddressClassifier.classify(address).rawValue)")
        }
    }
}

/// One resolved address, with the sockaddr to connect to.
public struct ResolvedAddress: Sendable {
    public let ip: IPAddress
    let storage: [UInt8]
    let family: Int32
}

/// Name resolution; a closure so tests can answer without DNS.
public typealias Resolver = @Sendable (_ host: String, _ port: UInt16) -> [ResolvedAddress]

public enum SystemResolver {
    /// getaddrinfo, blocking: call it on the fetch queue.
    public static let resolve: Resolver = { host, port in
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(list) }
        var out: [ResolvedAddress] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let n = node {
            let info = n.pointee
            if let sa = info.ai_addr {
                let bytes = Array(UnsafeRawBufferPointer(start: sa, count: Int(info.ai_addrlen)))
                let ip: IPAddress?
                if info.ai_family == AF_INET {
                    ip = sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { .v4(UInt32(bigEndian: $0.pointee.sin_addr.s_addr)) }
                } else if info.ai_family == AF_INET6 {
                    ip = sa.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { p in
                        var a = p.pointee.sin6_addr
                        return .v6(withUnsafeBytes(of: &a) { Array($0) })
                    }
                } else {
                    ip = nil
                }
                if let ip { out.append(ResolvedAddress(ip: ip, storage: bytes, family: info.ai_family)) }
            }
            node = info.ai_next
        }
        return out
    }
}
