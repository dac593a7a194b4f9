import CThumbCurl

/// Turns what a transfer left behind (flags, head, body length) into an
/// answer or a `FetchError`. Messages name the host, never an address (SourcesAndLimits.md):
/// libcurl's own error texts often carry the address, so only its generic
/// per-code text is used.
package enum TransferOutcome {
    package static func decide(_ r: thumbd_result, request: OriginRequest, refused: AddressClass?,
                               sinkFailure: BodySinkError? = nil) -> Result<OriginResponse, FetchError> {
        let host = request.url.host
        if r.cancelled != 0 { return .failure(.origin("the download engine stopped")) }
        if r.abandoned != 0 { return .failure(.origin("nobody waits for the download any more")) }
        if r.expired_in_queue != 0 { return .failure(.timeout("origin took longer than origin.timeoutSeconds")) }
        if r.too_large != 0 { return .failure(.tooLarge(limit: request.maxBytes)) }
        if r.sink_failed != 0 { return .failure(.storage(sinkFailure?.message ?? "the download could not be kept")) }
        if r.bad_length != 0 { return .failure(.origin("origin sent an invalid Content-Length")) }
        if r.bad_chunk != 0 { return .failure(.origin("malformed chunked body")) }
        if r.head_too_large != 0 { return .failure(.origin("origin response head too large")) }
        if r.head_line_too_long != 0 {
            // libcurl's own text for it is "Out of memory", which names nothing.
            return .failure(.origin("origin sent a header line longer than libcurl's limit of 100 KiB (CURL_MAX_HTTP_HEADER)"))
        }
        if r.curl_code != 0 && r.body_skipped == 0 {
            if r.refused != 0 {
                let why = refused?.rawValue ?? "not allowed"
                if IPAddress(host) != nil { return .failure(.forbidden("source address \(host) is \(why)")) }
                return .failure(.forbidden("source host \(host) resolves to a \(why) address"))
            }
            return .failure(error(r, host: host))
        }
        let bodyLength = (200..<300).contains(r.status) ? r.body_length : 0
        var response = OriginResponse(status: r.status, headers: headers(r), bodyLength: bodyLength)
        if let body = r.error_body, r.error_body_length > 0 {
            response.errorBody = Array(UnsafeBufferPointer(start: body, count: min(r.error_body_length, Int(THUMBD_MAX_ERROR_BODY))))
        }
        return .success(response)
    }

    private static func error(_ r: thumbd_result, host: String) -> FetchError {
        let text = String(cString: thumbd_curl_strerror(r.curl_code))
        switch Int(r.error_kind) {
        case Int(THUMBD_KIND_RESOLVE): return .origin("cannot resolve \(host)")
        case Int(THUMBD_KIND_CONNECT): return .origin("cannot connect to \(host)")
        case Int(THUMBD_KIND_TIMEOUT):
            if r.connected == 0 && r.connect_bounded != 0 { return .timeout("connect to \(host) timed out") }
            return .timeout("origin took longer than origin.timeoutSeconds")
        case Int(THUMBD_KIND_TLS): return .origin("TLS with \(host) failed: \(text)")
        case Int(THUMBD_KIND_NOTHING): return .origin("origin closed the connection before answering")
        case Int(THUMBD_KIND_PARTIAL): return .origin("origin sent fewer bytes than announced")
        case Int(THUMBD_KIND_RECEIVE): return .origin("connection to the origin failed")
        case Int(THUMBD_KIND_PROTOCOL): return .origin("origin sent a malformed response")
        default: return .origin("download from \(host) failed: \(text)")
        }
    }

    /// The final head's fields, lower-cased names; the last of a repeated field wins.
    /// On bytes, not Characters: every transfer (a download, each shared-store
    /// request) passes through here, and grapheme breaking cost ~18 µs a head.
    static func headers(_ r: thumbd_result) -> [String: String] {
        guard let head = r.head, r.head_length > 0 else { return [:] }
        return headers(UnsafeRawBufferPointer(start: head, count: r.head_length))
    }

    static func headers(_ head: UnsafeRawBufferPointer) -> [String: String] {
        var out: [String: String] = [:]
        var lineStart = 0, first = true
        while lineStart < head.count {
            var lineEnd = lineStart
            while lineEnd < head.count && head[lineEnd] != 0x0A { lineEnd += 1 }
            defer { lineStart = lineEnd + 1 }
            // The status line is not a field.
            if first { first = false; continue }
            guard let colon = (lineStart..<lineEnd).first(where: { head[$0] == 0x3A }) else { continue }
            var nameEnd = colon
            while nameEnd > lineStart && head[nameEnd - 1] == 0x0D { nameEnd -= 1 }
            var valueStart = colon + 1, valueEnd = lineEnd
            while valueStart < valueEnd && isBlank(head[valueStart]) { valueStart += 1 }
            while valueEnd > valueStart && isBlank(head[valueEnd - 1]) { valueEnd -= 1 }
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: head[lineStart..<nameEnd]), as: UTF8.self).lowercased()
            out[name] = String(decoding: UnsafeRawBufferPointer(rebasing: head[valueStart..<valueEnd]), as: UTF8.self)
        }
        return out
    }

    private static func isBlank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A }
}
