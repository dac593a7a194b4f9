import Foundation
import Synchronization

/// Downloads originals under the SSRF rules of SPEC §6: host allowlist and
/// address classes checked on the first URL and on every redirect, plain
/// `http` connected to exactly the address checked, `https` through
/// URLSession only after every resolved address passed.
public final class Fetcher: Sendable {
    private let currentPolicy: Mutex<FetchPolicy>
    private let resolver: Resolver

    public init(policy: FetchPolicy, resolver: @escaping Resolver = SystemResolver.resolve) {
        currentPolicy = Mutex(policy)
        self.resolver = resolver
    }

    /// New rules after a reload; fetches already running keep theirs.
    public func update(policy: FetchPolicy) {
        currentPolicy.withLock { $0 = policy }
    }

    public func fetch(_ text: String, conditional: Conditional?) throws(FetchError) -> FetchResult {
        // One policy for the whole fetch, redirects included, even if a reload lands meanwhile.
        let policy = currentPolicy.withLock { $0 }
        let deadline = Date().timeIntervalSince1970 + policy.totalTimeout
        var url = try SourceURL(text)
        var redirects = 0
        while true {
            try policy.checkHost(url)
            let response = try get(url, policy: policy, conditional: redirects == 0 ? conditional : nil, deadline: deadline)
            switch response.status {
            case 200..<300:
                return .fetched(body: response.body, etag: response.headers["etag"],
                                lastModified: response.headers["last-modified"], finalURL: url.absolute)
            case 304 where conditional != nil && redirects == 0:
                return .notModified(etag: response.headers["etag"], lastModified: response.headers["last-modified"])
            case 301, 302, 303, 307, 308:
                guard let location = response.headers["location"] else { throw .origin("redirect without Location") }
                redirects += 1
                guard redirects <= policy.maxRedirects else { throw .origin("too many redirects (over \(policy.maxRedirects))") }
                url = try url.resolve(location)
            case 404, 410:
                throw .notFound
            default:
                throw .origin("origin answered \(response.status)")
            }
        }
    }

    private func get(_ url: SourceURL, policy: FetchPolicy, conditional: Conditional?,
                     deadline: Double) throws(FetchError) -> OriginResponse {
        let addresses: [ResolvedAddress]
        if let literal = IPAddress(url.host) {
            addresses = resolver(literal.description, url.port).filter { $0.ip == literal }
        } else {
            addresses = resolver(url.host, url.port)
        }
        guard !addresses.isEmpty else { throw .origin("cannot resolve \(url.host)") }
        if url.scheme == "https" {
            // URLSession resolves again; that is safe only if every answer passes.
            for address in addresses { try policy.checkAddress(address.ip) }
            return try HTTPSClient(policy: policy).get(url, conditional: conditional, deadline: deadline)
        }
        var lastError = FetchError.origin("cannot connect to \(url.host)")
        for address in addresses {
            try policy.checkAddress(address.ip)
            do {
                return try PlainHTTPClient(policy: policy).get(url, address: address, conditional: conditional,
                                                               deadline: deadline)
            } catch {
                // Another address may answer; limits and timeouts end the attempt.
                guard case .origin = error else { throw error }
                lastError = error
            }
        }
        throw lastError
    }
}
