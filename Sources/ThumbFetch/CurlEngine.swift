import CThumbCurl

/// The libcurl multi engine (C, one thread) a `Fetcher` submits its
/// requests to. Transfers keep it alive: it stops when the last reference
/// goes, which may be inside a completion on its own thread (C handles that).
final class CurlEngine: @unchecked Sendable {
    private let raw: OpaquePointer?

    init(limit: Int) {
        raw = thumbd_engine_start(Int32(clamping: limit))
    }

    deinit {
        if let raw { thumbd_engine_stop(raw) }
    }

    func setLimit(_ limit: Int) {
        if let raw { thumbd_engine_set_limit(raw, Int32(clamping: limit)) }
    }

    /// (running, queued, most ever running at once).
    var counts: (running: Int, queued: Int, peak: Int) {
        guard let raw else { return (0, 0, 0) }
        var running: Int32 = 0, queued: Int32 = 0, peak: Int32 = 0
        thumbd_engine_counts(raw, &running, &queued, &peak)
        return (Int(running), Int(queued), Int(peak))
    }

    /// Starts one request whose 2xx body streams into `sink`; `completion`
    /// runs once, on the engine's thread (or at once, here, if the request
    /// could not be queued).
    func submit(_ request: OriginRequest, sink: any BodySink,
                completion: @escaping @Sendable (Result<OriginResponse, FetchError>) -> Void) {
        let hop = Hop(engine: self, request: request, sink: sink, completion: completion)
        guard let raw else { return completion(.failure(.origin("the download engine did not start"))) }
        let context = Unmanaged.passRetained(hop).toOpaque()
        let headers = request.headers.map { "\($0.0): \($0.1)" }.joined(separator: "\n")
        let resolve = request.resolve.joined(separator: "\n")
        let deadline = request.deadline
        let s3 = request.s3
        let queued: Int32 = request.url.curlURL.withCString { url in
            request.url.host.withCString { host in
                headers.withCString { headers in
                    resolve.withCString { resolve in
                        withOptionalCString(request.caFile) { caFile in
                            withOptionalCString(s3?.sigV4) { sigV4 in
                                withOptionalCString(s3?.accessKeyId) { username in
                                    withOptionalCString(s3?.secretAccessKey.revealed) { password in
                                        var r = thumbd_request()
                                        r.url = url
                                        r.expected_host = host
                                        r.headers = headers
                                        r.resolve = resolve
                                        r.ca_file = caFile
                                        r.connect_timeout_ms = Int(max(1, request.connectTimeout * 1000))
                                        r.deadline_ms = deadline
                                        r.max_bytes = request.maxBytes
                                        r.urgent = request.urgent ? 1 : 0
                                        r.aws_sigv4 = sigV4
                                        r.username = username
                                        r.password = password
                                        // An S3 key is sent byte for byte, its error text is kept for
                                        // the log, and the operator's endpoint may use every slot.
                                        r.path_as_is = s3 == nil ? 0 : 1
                                        r.keep_error_body = s3 == nil ? 0 : 1
                                        r.own_host_share = s3 == nil ? 0 : 1
                                        r.method = request.method.rawValue
                                        r.upload_fd = -1
                                        switch request.upload {
                                        case .file(let descriptor, let offset, let length)?:
                                            r.upload_fd = descriptor
                                            r.upload_offset = Int64(offset)
                                            r.upload_length = length
                                        case .bytes(let bytes)?:
                                            r.upload_length = bytes.count
                                        case nil: break
                                        }
                                        r.write = writeBody
                                        r.write_context = context
                                        r.check = checkAddress
                                        r.check_context = context
                                        r.done = transferDone
                                        r.done_context = context
                                        if request.wanted != nil {
                                            r.wanted = transferWanted
                                            r.wanted_context = context
                                        }
                                        // The shim copies the bytes before this returns.
                                        guard case .bytes(let bytes)? = request.upload else {
                                            return thumbd_engine_submit(raw, &r)
                                        }
                                        return bytes.withUnsafeBufferPointer { buffer in
                                            // A non-NULL pointer even for no bytes: NULL means "from the file".
                                            r.upload_bytes = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)
                                            return thumbd_engine_submit(raw, &r)
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        if queued != 0 {
            Unmanaged<Hop>.fromOpaque(context).release()
            completion(.failure(.origin("the download engine is stopping")))
        }
    }
}

private func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let s else { return body(nil) }
    return s.withCString { body($0) }
}

/// One request as the engine runs it. `package`: the origin-response fuzz
/// target builds one (a release build has no `@testable`).
package struct OriginRequest: Sendable {
    package var url: SourceURL
    package var headers: [(String, String)]
    package var connectTimeout: Double
    /// `thumbd_monotonic_ms()` clock.
    package var deadline: Int64
    package var maxBytes: Int
    package var caFile: String?
    package var urgent: Bool
    package var classify: @Sendable (IPAddress) -> AddressClass?
    /// CURLOPT_RESOLVE entries (tests: DNS answers without DNS).
    package var resolve: [String]
    /// Set for an `s3://` source: libcurl signs the request (SigV4).
    package var s3: S3Signing?
    /// GET for every download; the shared originals store also writes, looks and deletes.
    package var method: Method = .get
    /// A PUT's body.
    package var upload: Upload?
    /// Asked before the transfer starts and as it runs: false once nobody
    /// waits for the answer (it ends then, `abandoned`). nil: always wanted.
    package var wanted: (@Sendable () -> Bool)?

    package enum Method: Int32, Sendable {
        case get, head, put, delete
    }

    /// A PUT's body: a few bytes, or an original's file read as it is sent
    /// (never held whole in memory).
    package enum Upload: Sendable {
        case bytes([UInt8])
        case file(descriptor: Int32, offset: Int, length: Int)
    }

    package init(url: SourceURL, headers: [(String, String)], connectTimeout: Double, deadline: Int64, maxBytes: Int,
                 caFile: String?, urgent: Bool, classify: @escaping @Sendable (IPAddress) -> AddressClass?,
                 resolve: [String]) {
        self.url = url
        self.headers = headers
        self.connectTimeout = connectTimeout
        self.deadline = deadline
        self.maxBytes = maxBytes
        self.caFile = caFile
        self.urgent = urgent
        self.classify = classify
        self.resolve = resolve
    }
}

/// How libcurl signs an S3 request: `CURLOPT_AWS_SIGV4` and the credentials.
package struct S3Signing: Sendable {
    package var sigV4: String
    package var accessKeyId: String
    package var secretAccessKey: Secret
}

/// An origin's answer before redirects are followed; a 2xx body went to the sink.
package struct OriginResponse: Sendable {
    package var status: Int
    package var headers: [String: String]   // lower-cased names
    /// Bytes of the 2xx body written to the sink (0 for other statuses).
    package var bodyLength: Int
    /// The last address the checks allowed for this transfer: the one it used.
    package var address: IPAddress? = nil
    /// The first bytes of a non-2xx body, when the request kept them (S3's error document).
    package var errorBody: [UInt8] = []
}

/// What the C callbacks reach through their context pointer. Touched only
/// on the engine's thread once submitted.
private final class Hop: @unchecked Sendable {
    let engine: CurlEngine
    let request: OriginRequest
    let sink: any BodySink
    let completion: @Sendable (Result<OriginResponse, FetchError>) -> Void
    var refused: AddressClass?
    var allowed: IPAddress?
    /// Why the sink stopped the transfer, if it did.
    var sinkFailure: BodySinkError?

    init(engine: CurlEngine, request: OriginRequest, sink: any BodySink,
         completion: @escaping @Sendable (Result<OriginResponse, FetchError>) -> Void) {
        self.engine = engine
        self.request = request
        self.sink = sink
        self.completion = completion
    }
}

/// Called by libcurl (through the C shim) for every address it is about to
/// connect to: plain data in, a verdict out, nothing that can throw.
private let checkAddress: thumbd_address_check = { context, family, bytes in
    guard let context, let bytes else { return 0 }
    let hop = Unmanaged<Hop>.fromOpaque(context).takeUnretainedValue()
    let address: IPAddress
    if family == 4 {
        address = .v4(UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3]))
    } else {
        address = .v6(Array(UnsafeBufferPointer(start: bytes, count: 16)))
    }
    guard let refusal = hop.request.classify(address) else {
        hop.allowed = address
        return 1
    }
    hop.refused = hop.refused ?? refusal
    return 0
}

/// Called by libcurl (through the C shim) with each piece of a 2xx body: it
/// goes straight to the sink, and a sink error stops the transfer.
private let writeBody: thumbd_body_write = { context, bytes, count in
    guard let context, let bytes else { return 1 }
    let hop = Unmanaged<Hop>.fromOpaque(context).takeUnretainedValue()
    do throws(BodySinkError) {
        try hop.sink.write(UnsafeRawBufferPointer(start: bytes, count: count))
        return 0
    } catch {
        hop.sinkFailure = error
        return 1
    }
}

/// Called by the C engine before the transfer starts and as it runs.
private let transferWanted: thumbd_wanted = { context in
    guard let context else { return 1 }
    let hop = Unmanaged<Hop>.fromOpaque(context).takeUnretainedValue()
    return hop.request.wanted?() == false ? 0 : 1
}

private let transferDone: thumbd_done = { context, result in
    guard let context, let result else { return }
    let hop = Unmanaged<Hop>.fromOpaque(context).takeRetainedValue()
    hop.completion(TransferOutcome.decide(result.pointee, request: hop.request, refused: hop.refused,
                                          sinkFailure: hop.sinkFailure).map {
        var response = $0
        response.address = hop.allowed
        return response
    })
}
