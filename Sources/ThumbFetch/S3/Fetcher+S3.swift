extension Fetcher {
    /// The empty body's SHA-256: a GET's `x-amz-content-sha256`. libcurl 7.88
    /// does not send the header; AWS S3 refuses a signed request without it.
    static let emptyBodySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// An `s3://BUCKET/KEY` download (S3Sources.md): the
    /// bucket rules before any request, then one signed GET to the operator's
    /// endpoint through the same engine, limits and deadline as `http`. The
    /// endpoint is configuration, not a client's choice: the address rules
    /// and `origin.allowedHosts` do not apply, and a redirect is not followed.
    func fetchObject(_ location: S3Location, policy: FetchPolicy, conditional: Conditional?, sink: any BodySink,
                     deadline: Int64, wanted: (@Sendable () -> Bool)? = nil,
                     completion: @escaping @Sendable (Result<FetchResult, FetchError>) -> Void) {
        let s3: S3Settings
        do throws(FetchError) {
            s3 = try policy.s3Settings(for: location)
        } catch {
            return completion(.failure(error))
        }
        let address = s3.endpoint.address(of: location, pathStyle: s3.pathStyle)
        let url = address.request
        var headers = Self.baseHeaders + [("x-amz-content-sha256", Self.emptyBodySHA256)]
        Self.append(conditional, to: &headers)
        var request = OriginRequest(
            url: url, headers: headers, connectTimeout: policy.connectTimeout, deadline: deadline,
            maxBytes: policy.maxBytes, caFile: policy.caFile, urgent: false, classify: { _ in nil },
            resolve: resolve.map { answer in answer(url.host, url.port).map { "\(url.host):\(url.port):\($0)" } } ?? [])
        request.s3 = S3Signing(sigV4: s3.sigV4, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey)
        request.wanted = wanted
        engine.submit(request, sink: sink) { outcome in
            completion(outcome.flatMap { response in
                Self.objectResult(response, source: location.normalized, conditional: conditional != nil)
            })
        }
    }

    /// S3's answer as a fetch result. `404` is a missing object or bucket;
    /// everything else that is not `2xx` or an expected `304` is the store's
    /// failure, named with S3's error code when its body gives one.
    static func objectResult(_ response: OriginResponse, source: String,
                             conditional: Bool) -> Result<FetchResult, FetchError> {
        switch response.status {
        case 200..<300:
            return .success(.fetched(length: response.bodyLength, etag: response.headers["etag"],
                                     lastModified: response.headers["last-modified"], finalURL: source, address: nil))
        case 304 where conditional:
            return .success(.notModified(etag: response.headers["etag"], lastModified: response.headers["last-modified"]))
        case 404, 410:
            return .failure(.notFound)
        default:
            let code = S3ErrorDocument.code(in: response.errorBody).map { " \($0)" } ?? ""
            if [301, 302, 303, 307, 308].contains(response.status) {
                return .failure(.origin("S3 answered \(response.status)\(code); redirects from s3.endpoint are not followed"))
            }
            return .failure(.origin("S3 answered \(response.status)\(code)"))
        }
    }
}
