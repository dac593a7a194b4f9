import CThumbCurl

/// What the shared originals store asks of the operator's bucket
/// (SeveralInstances.md): one signed request per call.
public enum ObjectOperation: Sendable {
    /// The object's bytes into `sink`, at most `maxBytes` of them.
    case get(into: any BodySink, maxBytes: Int)
    /// Whether the object exists (its length and `ETag` in the answer).
    case head
    /// Writes the object: `body` with its hex SHA-256 (SigV4's payload hash).
    case put(ObjectBody, sha256: String, contentType: String)
    case delete
}

/// A PUT's body.
public enum ObjectBody: Sendable {
    case bytes([UInt8])
    /// `length` bytes of an open file from `offset`: read as they are sent,
    /// never held whole. The descriptor must stay open until `submit`
    /// returns (the engine keeps its own duplicate).
    case file(descriptor: Int32, offset: Int, length: Int)
}

/// A `2xx` answer from the bucket.
public struct ObjectAnswer: Sendable, Equatable {
    public var status: Int
    /// Bytes of a GET's body written to the sink; `Content-Length` of a HEAD.
    public var length: Int
    public var etag: String?
}

extension Fetcher {
    /// One request to the operator's own bucket: the shared originals store.
    /// Unlike an `s3://` source, no bucket rule applies (the bucket is
    /// configuration, `diskStore.shared`, never a client's choice), and the
    /// deadline is `timeout` (`s3.timeoutSeconds`) from now. `404` is
    /// `.notFound`; any other status outside `2xx` is `.origin`, naming S3's
    /// error code when its body gives one. It runs on the store's own engine
    /// (`objectEngine`), never in a slot of `origin.maxConcurrentFetches`.
    /// `completion` runs once, on that engine's thread or, when there is no
    /// store to ask, on the caller's.
    public func object(_ operation: ObjectOperation, bucket: String, key: String, timeout: Double,
                       completion: @escaping @Sendable (Result<ObjectAnswer, FetchError>) -> Void) {
        let policy = self.policy
        guard let s3 = policy.s3 else { return completion(.failure(.badURL("the shared store needs s3.endpoint"))) }
        // The bucket is configuration, checked when it was read; checked again, as it is cheap, so that no
        // caller can make it part of a host name unchecked.
        guard S3Location.isValidBucket(bucket) else { return completion(.failure(.badURL("cannot address \(bucket) at s3.endpoint"))) }
        let url = s3.endpoint.address(of: S3Location(bucket: bucket, key: key), pathStyle: s3.pathStyle).request
        var headers = [("User-Agent", "thumbd/0.1")]
        var sink: any BodySink = DiscardSink()
        var maxBytes = 1 << 20   // a PUT's or DELETE's answer is a short document
        var upload: OriginRequest.Upload?
        let method: OriginRequest.Method
        switch operation {
        case .get(let into, let limit):
            (method, sink, maxBytes) = (.get, into, limit)
            headers.append(("x-amz-content-sha256", Self.emptyBodySHA256))
        case .head:
            // A HEAD announces the object's length: it is no body to refuse.
            (method, maxBytes) = (.head, Int.max)
            headers.append(("x-amz-content-sha256", Self.emptyBodySHA256))
        case .delete:
            method = .delete
            headers.append(("x-amz-content-sha256", Self.emptyBodySHA256))
        case .put(let body, let sha256, let contentType):
            method = .put
            // No `Expect:` to suppress `100-continue`: libcurl 7.88 signs the empty header it then leaves out,
            // and the store refuses the signature.
            headers += [("x-amz-content-sha256", sha256), ("Content-Type", contentType)]
            switch body {
            case .bytes(let bytes): upload = .bytes(bytes)
            case .file(let descriptor, let offset, let length): upload = .file(descriptor: descriptor, offset: offset, length: length)
            }
        }
        let deadline = thumbd_monotonic_ms() + Int64(timeout * 1000)
        var request = OriginRequest(
            url: url, headers: headers, connectTimeout: min(policy.connectTimeout, timeout), deadline: deadline,
            maxBytes: maxBytes, caFile: policy.caFile, urgent: false, classify: { _ in nil },
            resolve: resolve.map { answer in answer(url.host, url.port).map { "\(url.host):\(url.port):\($0)" } } ?? [])
        request.s3 = S3Signing(sigV4: s3.sigV4, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey)
        request.method = method
        request.upload = upload
        objectEngine.submit(request, sink: sink) { outcome in
            completion(outcome.flatMap { response in
                switch response.status {
                case 200..<300:
                    let length = method == .head ? Int(response.headers["content-length"] ?? "") ?? 0 : response.bodyLength
                    return .success(ObjectAnswer(status: response.status, length: length, etag: response.headers["etag"]))
                default:
                    let named = S3ErrorDocument.code(in: response.errorBody)
                    // A missing bucket is the operator's to hear of, not a miss.
                    if response.status == 404 && named != "NoSuchBucket" { return .failure(.notFound) }
                    let code = named.map { " \($0)" } ?? ""
                    return .failure(.origin("the shared store answered \(response.status)\(code)"))
                }
            })
        }
    }
}

/// Takes a PUT's or DELETE's short answer and keeps nothing.
private final class DiscardSink: BodySink {
    func write(_ bytes: UnsafeRawBufferPointer) throws(BodySinkError) {}
}
