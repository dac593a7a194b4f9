import Testing
@testable import ThumbFetch

/// `s3://BUCKET/KEY` without a store (S3Sources.md): the
/// bucket rules, the key decoded once and S3-encoded, one normalized spelling
/// per object, the URL and `Host` of path and virtual-host style, and S3's
/// answers as fetch results.
@Suite struct S3AddressingTests {
    // MARK: - Keys

    @Test func aKeyIsEncodedByteByByteWithUpperCaseHex() {
        #expect(S3Location.encode(key: "photos/2024/cat.jpg") == "photos/2024/cat.jpg")
        #expect(S3Location.encode(key: "a b+c%d") == "a%20b%2Bc%25d")
        #expect(S3Location.encode(key: "déjà vu/東京.png") == "d%C3%A9j%C3%A0%20vu/%E6%9D%B1%E4%BA%AC.png")
        #expect(S3Location.encode(key: "x?y#z&(1);=*'!~-_.") == "x%3Fy%23z%26%281%29%3B%3D%2A%27%21~-_.")
        #expect(S3Location.encode(key: "a//b/../c/./") == "a//b/../c/./", "slashes and dots stay: a key is not a path")
        #expect(S3Location.encode(key: "\u{7F}\u{01}") == "%7F%01")
    }

    @Test func theKeyIsPercentDecodedOnceAndEverySpellingNormalizesAlike() throws {
        let location = try S3Location("s3://media-bucket/user%20uploads/caf%c3%a9+1%2525.jpg")
        #expect(location.bucket == "media-bucket")
        #expect(location.key == "user uploads/café+1%25.jpg", "decoded once: %2525 is the three characters %25")
        #expect(location.normalized == "s3://media-bucket/user%20uploads/caf%C3%A9%2B1%2525.jpg")
        for spelling in ["S3://media-bucket/user uploads/café+1%2525.jpg",
                         "s3://media-bucket/user%20uploads/caf%C3%A9%2B1%2525.jpg",
                         "s3://media-bucket/%75ser uploads/café%2b1%2525.jpg"] {
            #expect(URLNormalization.normalize(spelling) == location.normalized, "\(spelling)")
        }
        #expect(try S3Location("s3://b-1/a%2Fb").key == "a/b")
        #expect(try S3Location("s3://b-1/a/../b").normalized == "s3://b-1/a/../b", "no dot-segment removal")
        #expect(try S3Location("s3://b-1//lead").key == "/lead")
    }

    @Test(arguments: [
        "s3://media-bucket",                 // no key
        "s3://media-bucket/",                // empty key
        "s3://media-bucket/a?versionId=1",   // a raw ? starts a query
        "s3://media-bucket/a#b",             // and # a fragment
        "s3://media-bucket/100%",            // a % that starts no escape
        "s3://media-bucket/%zz",
        "s3://media-bucket/%C3",             // not UTF-8 once decoded
        "s3://Media-Bucket/a",               // bucket names are lower-case
        "s3://ab/a",                         // too short
        "s3://a..b/a",
        "s3://-ab/a",
        "s3://ab-/a",
        "s3://a.-b/a",
        "s3://192.168.5.4/a",                // formatted as an IP address
        "s3://xn--abc/a",
        "s3://bucket-s3alias/a",
        "s3://user@bucket/a",
        "s3://bucket:9000/a",
        "http://bucket/a",
    ])
    func badS3URLsAreTheClientsMistake(_ text: String) {
        #expect(throws: FetchError.self) { try S3Location(text) }
        do {
            _ = try S3Location(text)
        } catch {
            guard case .badURL = error else { Issue.record("\(text): \(error)"); return }
        }
    }

    @Test func aKeyOfMoreThan1024BytesIsRefused() throws {
        #expect(try S3Location("s3://bucket/" + String(repeating: "é", count: 512)).key.utf8.count == 1024)
        #expect(throws: FetchError.self) { try S3Location("s3://bucket/" + String(repeating: "é", count: 512) + "x") }
    }

    @Test func bucketNames() {
        for good in ["abc", "my-bucket", "my.bucket.example", "a1b2c3", String(repeating: "a", count: 63), "1.2.3.b"] {
            #expect(S3Location.isValidBucket(good), "\(good)")
        }
        for bad in ["", "ab", String(repeating: "a", count: 64), "My-bucket", "my_bucket", "my bucket", "-ab", "ab-",
                    ".ab", "ab.", "a..b", "a.-b", "a-.b", "10.0.0.1", "sthree-x", "amzn-s3-demo-x", "x--ol-s3",
                    "x--x-s3", "x--table-s3", "x.mrap", "bücket"] {
            #expect(!S3Location.isValidBucket(bad), "\(bad)")
        }
    }

    @Test func theSchemeIsRecognizedInAnyCase() {
        #expect(S3Location.hasScheme("s3://b/k") && S3Location.hasScheme("S3://b/k"))
        #expect(!S3Location.hasScheme("s3:/b/k") && !S3Location.hasScheme("s4://b/k") && !S3Location.hasScheme("s3"))
        #expect(!S3Location.hasScheme("x3://b/k") && !S3Location.hasScheme("https://b/k"))
    }

    // MARK: - Endpoint, path style and virtual-host style

    @Test func pathStyleAddressesTheBucketInThePath() throws {
        let endpoint = try S3Endpoint("http://127.0.0.1:8333")
        let address = endpoint.address(of: try S3Location("s3://media/a b/ü+.jpg"), pathStyle: true)
        #expect(address.url == "http://127.0.0.1:8333/media/a%20b/%C3%BC%2B.jpg")
        #expect(address.host == "127.0.0.1" && address.hostHeader == "127.0.0.1:8333")
        #expect(address.path == "/media/a%20b/%C3%BC%2B.jpg")
        let v6 = try S3Endpoint("https://[::1]:9000/").address(of: try S3Location("s3://media/k"), pathStyle: true)
        #expect(v6.url == "https://[::1]:9000/media/k" && v6.host == "::1" && v6.hostHeader == "[::1]:9000")
    }

    @Test func virtualHostStyleMakesTheBucketPartOfTheHost() throws {
        let location = try S3Location("s3://media.example/a b/ü+.jpg")
        let aws = try S3Endpoint("https://s3.eu-west-1.amazonaws.com").address(of: location, pathStyle: false)
        #expect(aws.url == "https://media.example.s3.eu-west-1.amazonaws.com:443/a%20b/%C3%BC%2B.jpg")
        #expect(aws.host == "media.example.s3.eu-west-1.amazonaws.com")
        #expect(aws.hostHeader == "media.example.s3.eu-west-1.amazonaws.com", "the default port is not in Host")
        #expect(aws.path == "/a%20b/%C3%BC%2B.jpg")
        let minio = try S3Endpoint("HTTP://Store.Internal:9000").address(of: location, pathStyle: false)
        #expect(minio.url == "http://media.example.store.internal:9000/a%20b/%C3%BC%2B.jpg")
        #expect(minio.hostHeader == "media.example.store.internal:9000")
        #expect(try S3Endpoint("http://store:80").address(of: location, pathStyle: true).hostHeader == "store")
    }

    /// The engine's URL is built from the parts, not parsed back: it must be what parsing would give.
    @Test(arguments: [("http://127.0.0.1:8333", true), ("https://[::1]:9000/", true), ("https://s3.eu-west-1.amazonaws.com", false),
                      ("HTTP://Store.Internal:9000", false), ("http://store:80", true), ("http://[::1]:80", true)])
    func theRequestURLIsTheOneTheParserWouldGive(_ endpoint: String, _ pathStyle: Bool) throws {
        let locations = try ["s3://media.example/a b/ü+.jpg", "s3://media/k", "s3://bucket-1/dir/x%3Fy%23z%41.png"].map(S3Location.init)
            + [S3Location(bucket: "media", key: "thumbd/a b?#%.json")]
        for location in locations {
            let address = try S3Endpoint(endpoint).address(of: location, pathStyle: pathStyle)
            #expect(address.request == (try SourceURL(address.url)), "\(endpoint) \(location)")
            #expect(address.request.hostHeader == address.hostHeader)
        }
    }

    @Test(arguments: ["ftp://store", "http://store/prefix", "http://store/?x=1", "http://user:pw@store",
                      "http://store#f", "store:9000", "http://store:0", "http://store:70000", ""])
    func anEndpointIsHTTPOrHTTPSHostAndPortOnly(_ text: String) {
        #expect(throws: FetchError.self) { try S3Endpoint(text) }
    }

    @Test func anIPEndpointCannotTakeVirtualHostStyle() throws {
        #expect(try S3Endpoint("http://127.0.0.1:1").hostIsAddress)
        #expect(try S3Endpoint("http://[::1]:1").hostIsAddress)
        #expect(try !S3Endpoint("http://localhost:1").hostIsAddress)
    }

    // MARK: - Rules and answers

    private func policy(buckets: [String]?) -> FetchPolicy {
        FetchPolicy(allowedHosts: ["only.example"], allowPrivateNetworks: false, maxRedirects: 3, connectTimeout: 1,
                    totalTimeout: 1, maxBytes: 1 << 20,
                    s3: try? buckets.map { S3Settings(endpoint: try S3Endpoint("http://127.0.0.1:9"), region: "us-east-1",
                                                      accessKeyId: "id", secretAccessKey: Secret("s"), allowedBuckets: $0) })
    }

    @Test func theBucketMustBeAllowedAndTheStoreConfigured() throws {
        #expect(throws: FetchError.badURL("s3 sources need s3.endpoint in the configuration")) {
            try policy(buckets: nil).s3Settings(forBucket: "media")
        }
        #expect(throws: FetchError.forbidden("bucket media is not in s3.allowedBuckets")) {
            try policy(buckets: []).s3Settings(forBucket: "media")
        }
        #expect(try policy(buckets: ["media"]).s3Settings(forBucket: "media").accessKeyId == "id")
    }

    /// Refusals come before any transfer: the endpoint (port 9, discard) is never dialled.
    @Test func refusalsAnswerWithoutATransfer() {
        let fetcher = Fetcher(policy: policy(buckets: ["media"]))
        #expect(throws: FetchError.forbidden("bucket other is not in s3.allowedBuckets")) {
            try fetcher.fetch("s3://other/a.jpg", conditional: nil, into: MemorySink())
        }
        #expect(throws: FetchError.badURL("'Media' is not a valid S3 bucket name")) {
            try fetcher.fetch("s3://Media/a.jpg", conditional: nil, into: MemorySink())
        }
        #expect(throws: FetchError.badURL("s3 sources need s3.endpoint in the configuration")) {
            try Fetcher(policy: policy(buckets: nil)).fetch("s3://media/a.jpg", conditional: nil, into: MemorySink())
        }
        #expect(fetcher.transferCounts.peak == 0)
    }

    @Test func s3AnswersBecomeFetchResults() {
        func answer(_ status: Int, _ body: String = "", headers: [String: String] = [:], conditional: Bool = false)
            -> Result<FetchResult, FetchError> {
            var r = OriginResponse(status: status, headers: headers, bodyLength: status == 200 ? 7 : 0)
            r.errorBody = Array(body.utf8)
            return Fetcher.objectResult(r, source: "s3://media/k", conditional: conditional)
        }
        #expect(answer(200, headers: ["etag": "\"e1\""]) == .success(.fetched(length: 7, etag: "\"e1\"", lastModified: nil,
                                                                              finalURL: "s3://media/k", address: nil)))
        #expect(answer(304, headers: ["etag": "\"e1\""], conditional: true) == .success(.notModified(etag: "\"e1\"", lastModified: nil)))
        #expect(answer(404, "<Error><Code>NoSuchKey</Code></Error>") == .failure(.notFound))
        let denied = #"<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code><Message>…</Message></Error>"#
        #expect(answer(403, denied) == .failure(.origin("S3 answered 403 SignatureDoesNotMatch")))
        #expect(answer(403) == .failure(.origin("S3 answered 403")))
        #expect(answer(301, "<Error><Code>PermanentRedirect</Code></Error>", headers: ["location": "http://elsewhere/"])
                == .failure(.origin("S3 answered 301 PermanentRedirect; redirects from s3.endpoint are not followed")))
        #expect(answer(304) == .failure(.origin("S3 answered 304")), "a 304 to an unconditional request")
    }

    @Test func onlyAPlainCodeIsTakenFromAnErrorDocument() {
        func code(_ s: String) -> String? { S3ErrorDocument.code(in: Array(s.utf8)) }
        #expect(code("<Error><Code>AccessDenied</Code></Error>") == "AccessDenied")
        #expect(code("<Error><Code>Access Denied\r\nX: y</Code></Error>") == nil, "no spaces or line breaks into a log line")
        #expect(code("<Error><Code>" + String(repeating: "A", count: 65) + "</Code></Error>") == nil)
        #expect(code("<Error><Code></Code></Error>") == nil)
        #expect(code("<Error><Code>Unterminated") == nil)
        #expect(code("not xml") == nil)
    }

    @Test func theSecretNeverPrints() throws {
        let secret = Secret("wJalrXUtnFEMI/K7MDENG")
        let settings = S3Settings(endpoint: try S3Endpoint("http://127.0.0.1:1"), region: "us-east-1", accessKeyId: "id",
                                  secretAccessKey: secret, allowedBuckets: [])
        var dumped = ""
        dump(settings, to: &dumped)
        for text in ["\(secret)", String(describing: secret), String(reflecting: secret), "\(settings)",
                     String(reflecting: settings), dumped] {
            #expect(!text.contains("wJalr"), "\(text)")
        }
        #expect(secret.revealed == "wJalrXUtnFEMI/K7MDENG")
    }
}
