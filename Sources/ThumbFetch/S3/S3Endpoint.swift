/// The S3-compatible store's address, `s3.endpoint` (`http(s)://HOST[:PORT]`),
/// and the request URL it gives each object (S3Sources.md).
public struct S3Endpoint: Equatable, Sendable {
    public let scheme: String
    /// Host name (lower-cased) or IP address in its canonical text, without brackets.
    public let host: String
    public let port: UInt16

    /// Refuses anything but `http(s)://HOST[:PORT]` with an optional `/`:
    /// no credentials, path, query or fragment. The message names no value
    /// beyond the URL itself.
    public init(_ text: String) throws(FetchError) {
        guard !text.contains("#") else { throw .badURL("s3.endpoint must be http(s)://HOST[:PORT]") }
        let url: SourceURL
        do throws(FetchError) { url = try SourceURL(text) } catch {
            throw .badURL("s3.endpoint must be http(s)://HOST[:PORT]")
        }
        guard url.target == "/" else { throw .badURL("s3.endpoint must be http(s)://HOST[:PORT], without a path or query") }
        scheme = url.scheme
        host = url.host
        port = url.port
    }

    /// True when the host is an IP address: virtual-host style needs a name.
    public var hostIsAddress: Bool { IPAddress(host) != nil }

    /// Where `key` of `bucket` is read: `ENDPOINT/BUCKET/KEY` (path style) or
    /// `BUCKET.HOST/KEY` (virtual-host style), the key S3-encoded.
    public func address(of location: S3Location, pathStyle: Bool) -> S3ObjectAddress {
        let key = S3Location.encode(key: location.key)
        let host = pathStyle ? self.host : location.bucket + "." + self.host
        let path = pathStyle ? "/" + location.bucket + "/" + key : "/" + key
        let name = host.contains(":") ? "[\(host)]" : host
        // Built from parts already checked (the endpoint by `init`, the bucket by its naming rules, the key
        // S3-encoded), not parsed back: one URLComponents parse per store request was a measurable share of
        // a shared-store write (Results.md § The shared originals store).
        return S3ObjectAddress(request: SourceURL(checkedScheme: scheme, host: host, port: port, target: path,
                                                  absolute: "\(scheme)://\(name):\(port)\(path)"))
    }
}

/// One object's request as libcurl makes it: what it connects to, the `Host`
/// it sends (and SigV4 signs) and the path, byte for byte.
public struct S3ObjectAddress: Equatable, Sendable {
    /// The address as the engine takes it; the rest is read from it.
    public let request: SourceURL
    /// The URL handed to libcurl (port always written, as for `SourceURL.curlURL`).
    public var url: String { request.absolute }
    /// The host connected to, and compared with libcurl's own parse of `url`.
    public var host: String { request.host }
    /// The `Host` header: the default port left out, as libcurl writes it.
    public var hostHeader: String { request.hostHeader }
    /// The request target: `/BUCKET/KEY` or `/KEY`, S3-encoded.
    public var path: String { request.target }
}
