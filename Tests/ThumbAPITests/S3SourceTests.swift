import Foundation
import Glibc
import Testing
import ThumbTestSupport
import ThumbClock
import ThumbHTTP
@testable import ThumbFetch
@testable import ThumbAPI
@testable import ThumbJSON
@testable import ThumbService

/// `s3://` sources end to end (S3Sources.md): the real
/// `Daemon` reading from a real S3 store — SeaweedFS on 127.0.0.1, checking
/// every signature — with objects put there by the curl command line. Where
/// the store cannot show something (which requests reached it, a stall
/// mid-body), a `LoopbackProxy` stands between thumbd and the store.
@Suite(.serialized, .seaweedS3) struct S3SourceTests {
    // MARK: - Helpers

    private func store() throws -> SeaweedS3 {
        try #require(SeaweedS3.current, "the suite's SeaweedFS (SeaweedS3Scope) is missing")
    }

    /// A fresh bucket for one test.
    private func bucket(_ s3: SeaweedS3, _ prefix: String = "src") throws -> String {
        let name = "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
        try s3.createBucket(name)
        return name
    }

    static let rocket = TestOrigin.jpeg   // 640×427: w=100 gives 100×67
    /// 24×32 stored, EXIF orientation 6: 32×24 as seen, and so at w=100.
    static let small = [UInt8](FileManager.default.contents(atPath: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../ThumbCodecTests/Fixtures/orient/orient-6.jpg").standardized.path) ?? Data())

    /// Only ASCII letters and digits stay as they are: the request target carries no raw UTF-8.
    private func encoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    private func thumbnail(_ url: String, _ extra: String = "&w=100") -> String { "/thumbnail?url=\(encoded(url))\(extra)" }

    private func errorCode(_ body: [UInt8]) -> String? {
        guard case .object(let members)? = try? JSONParser.parse(body),
              case .string(let code)? = members.first(where: { $0.key == "error" })?.value else { return nil }
        return code
    }

    /// The service's configuration for the store at `endpoint`. The address
    /// rules stay on: they must not apply to the endpoint (127.0.0.1).
    private func configure(_ c: inout DaemonConfiguration, _ s3: SeaweedS3, endpoint: String? = nil,
                           buckets: [String], secret: String? = nil) {
        c.service.origin.allowPrivateNetworks = false
        c.useStore(s3, endpoint: endpoint, secret: secret)
        c.service.s3.allowedBuckets = buckets
    }

    // MARK: - Keys

    /// Spaces, UTF-8, `+`, `%` and nested folders: each key, put by curl in
    /// S3's encoding, is read back through thumbd from a URL that spells it
    /// decoded. A `+` is a plus, never a space: `a b.jpg` is another image.
    @Test func keysWithSpacesUnicodePlusPercentAndSlashes() throws {
        let s3 = try store()
        let media = try bucket(s3)
        // (wire encoding for the put, URL given to thumbd, expected size)
        let cases: [(put: String, url: String, size: String)] = [
            ("with%20space/a%20b.jpg", "s3://\(media)/with space/a b.jpg", "32x24"),
            ("d%C3%A9j%C3%A0/%E6%9D%B1%E4%BA%AC.jpg", "s3://\(media)/déjà/東京.jpg", "100x67"),
            ("a%2Bb.jpg", "s3://\(media)/a+b.jpg", "100x67"),
            ("a%20b.jpg", "s3://\(media)/a b.jpg", "32x24"),
            ("100%25%20sure.jpg", "s3://\(media)/100%25 sure.jpg", "32x24"),
            ("x/y/z/deep.jpg", "s3://\(media)/x/y/z/deep.jpg", "100x67"),
            ("%28paren%29%3B%3D%26%27.jpg", "s3://\(media)/(paren);=&'.jpg", "100x67"),
        ]
        for c in cases { try s3.put(c.size == "32x24" ? Self.small : Self.rocket, bucket: media, encodedKey: c.put) }
        let daemon = try S3TestDaemon {
            configure(&$0, s3, buckets: [media])
            // Not for s3 sources: neither on a miss nor on a memory hit.
            $0.service.origin.allowedHosts = ["images.example"]
        }
        defer { daemon.stop() }
        for c in cases {
            let r = daemon.get(thumbnail(c.url))
            #expect(r.status == 200, "\(c.url): \(r.status) \(String(decoding: r.body, as: UTF8.self))")
            #expect("\(r.headers["x-image-width"] ?? "?")x\(r.headers["x-image-height"] ?? "?")" == c.size, "\(c.url)")
            #expect(r.headers["x-cache"] == "origin", "\(c.url)")
        }
        // Other spellings of the same objects share their variants.
        for spelling in ["s3://\(media)/d%C3%A9j%C3%A0/%E6%9D%B1%E4%BA%AC.jpg", "S3://\(media)/x%2Fy/z/deep.jpg",
                         "s3://\(media)/a%2bb.jpg"] {
            let r = daemon.get(thumbnail(spelling))
            #expect(r.status == 200 && r.headers["x-cache"] == "memory", "\(spelling): \(r.status) \(r.headers)")
        }
        #expect(daemon.stats("origin")["fetches"] == cases.count)

        // DELETE /cache under yet another spelling forgets the original and its variant.
        let purge = daemon.get("/cache?url=\(encoded("s3://\(media)/d%c3%a9j%c3%a0/東京.jpg"))", method: "DELETE")
        guard case .object(let fields)? = try? JSONParser.parse(purge.body),
              case .integer(let removed)? = fields.first(where: { $0.key == "removed" })?.value else {
            Issue.record("DELETE /cache: \(purge.status) \(String(decoding: purge.body, as: UTF8.self))"); return
        }
        #expect(purge.status == 200 && removed >= 2, "the original on disk and the variant in memory at least: \(removed)")
        let again = daemon.get(thumbnail("s3://\(media)/déjà/東京.jpg"))
        #expect(again.status == 200 && again.headers["x-cache"] == "origin", "\(again.headers)")
        #expect(daemon.stats("origin")["fetches"] == cases.count + 1)
    }

    /// What goes on the wire: the key in S3's encoding, byte for byte; the
    /// empty body's hash; a SigV4 `Authorization` signing it; no secret.
    @Test func theRequestIsSignedWithTheEmptyBodyHash() throws {
        let s3 = try store()
        let media = try bucket(s3)
        try s3.put(Self.rocket, bucket: media, encodedKey: "caf%C3%A9/a%2Bb%20c.jpg")
        let proxy = try LoopbackProxy(upstream: s3.port)
        defer { proxy.stop() }
        let daemon = try S3TestDaemon { configure(&$0, s3, endpoint: "http://127.0.0.1:\(proxy.port)", buckets: [media]) }
        defer { daemon.stop() }
        let r = daemon.get(thumbnail("s3://\(media)/café/a+b c.jpg"))
        #expect(r.status == 200)
        let sent = try #require(proxy.requests.first)
        #expect(sent.hasPrefix("GET /\(media)/caf%C3%A9/a%2Bb%20c.jpg HTTP/1.1\r\n"), "\(sent)")
        let lines = sent.split(separator: "\r\n").map(String.init)
        #expect(lines.contains("x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
        #expect(lines.contains("Host: 127.0.0.1:\(proxy.port)"))
        let auth = try #require(lines.first { $0.hasPrefix("Authorization: ") })
        #expect(auth.hasPrefix("Authorization: AWS4-HMAC-SHA256 Credential=\(s3.accessKey)/"), "\(auth)")
        #expect(auth.contains("/us-east-1/s3/aws4_request"), "\(auth)")
        let signed = auth.components(separatedBy: "SignedHeaders=").last?.components(separatedBy: ",").first ?? ""
        #expect(signed.split(separator: ";").contains("x-amz-content-sha256") && signed.contains("host"), "\(signed)")
        #expect(!sent.contains(s3.secretKey))
    }

    // MARK: - Errors

    @Test func aMissingKeyOrBucketIs404() throws {
        let s3 = try store()
        let media = try bucket(s3)
        let daemon = try S3TestDaemon { configure(&$0, s3, buckets: [media, "never-created"]) }
        defer { daemon.stop() }
        for url in ["s3://\(media)/missing.jpg", "s3://never-created/a.jpg"] {
            let r = daemon.get(thumbnail(url))
            #expect(r.status == 404 && errorCode(r.body) == "source_not_found", "\(url): \(r.status)")
        }
        #expect(daemon.log.isEmpty, "a 404 is no failure of the store: \(daemon.log)")
    }

    /// A wrong secret: S3 refuses the signature (403), which is the store's
    /// failure (502), logged with S3's own code.
    @Test func aWrongSecretIs502AndTheLogNamesS3sCode() throws {
        let s3 = try store()
        let media = try bucket(s3)
        try s3.put(Self.rocket, bucket: media, encodedKey: "a.jpg")
        let wrong = "wrong-" + UUID().uuidString
        let daemon = try S3TestDaemon { configure(&$0, s3, buckets: [media], secret: wrong) }
        defer { daemon.stop() }
        let r = daemon.get(thumbnail("s3://\(media)/a.jpg"))
        #expect(r.status == 502 && errorCode(r.body) == "origin_error")
        let message = String(decoding: r.body, as: UTF8.self)
        #expect(message.contains("S3 answered 403 SignatureDoesNotMatch"), "\(message)")
        #expect(daemon.log == ["s3://\(media)/a.jpg: S3 answered 403 SignatureDoesNotMatch"], "\(daemon.log)")
        #expect(!message.contains(wrong) && !daemon.log.joined().contains(wrong))
    }

    /// A bucket outside `s3.allowedBuckets` is refused before any request: the
    /// store (behind a counting proxy) sees no connection; `[]` allows none.
    @Test func aForbiddenBucketIsRefusedBeforeAnyRequest() throws {
        let s3 = try store()
        let media = try bucket(s3), other = try bucket(s3, "other")
        try s3.put(Self.rocket, bucket: other, encodedKey: "a.jpg")
        let proxy = try LoopbackProxy(upstream: s3.port)
        defer { proxy.stop() }
        for allowed in [[media], []] {
            let daemon = try S3TestDaemon { configure(&$0, s3, endpoint: "http://127.0.0.1:\(proxy.port)", buckets: allowed) }
            defer { daemon.stop() }
            let r = daemon.get(thumbnail("s3://\(other)/a.jpg"))
            #expect(r.status == 403 && errorCode(r.body) == "forbidden_source", "\(allowed): \(r.status)")
            #expect(String(decoding: r.body, as: UTF8.self).contains("not in s3.allowedBuckets"))
            #expect(proxy.connections == 0, "the store was asked: \(proxy.requests)")
        }
        // The same proxy does carry an allowed bucket's request.
        let daemon = try S3TestDaemon { configure(&$0, s3, endpoint: "http://127.0.0.1:\(proxy.port)", buckets: [other]) }
        defer { daemon.stop() }
        #expect(daemon.get(thumbnail("s3://\(other)/a.jpg")).status == 200)
        #expect(proxy.connections == 1)
    }

    /// Without an `s3` section an `s3` URL is the client's mistake, as is a
    /// bucket name S3 would not accept.
    @Test func s3WithoutAnEndpointOrWithABadBucketIs400() throws {
        let s3 = try store()
        let plain = try S3TestDaemon { _ in }
        defer { plain.stop() }
        let r = plain.get(thumbnail("s3://media/a.jpg"))
        #expect(r.status == 400 && errorCode(r.body) == "bad_request")
        #expect(String(decoding: r.body, as: UTF8.self).contains("s3.endpoint"))
        let configured = try S3TestDaemon { configure(&$0, s3, buckets: ["media"]) }
        defer { configured.stop() }
        for url in ["s3://Media/a.jpg", "s3://media/", "s3://media/a.jpg?versionId=2", "s3://a_b/x.jpg"] {
            let r = configured.get(thumbnail(url))
            #expect(r.status == 400 && errorCode(r.body) == "bad_request", "\(url): \(r.status)")
        }
        #expect(configured.get("/info?url=\(encoded("s3://Media/a.jpg"))").status == 400)
    }

    // MARK: - Revalidation and stalls

    /// Past `diskStore.ttlSeconds` the original is revalidated with
    /// `If-None-Match` against the object's ETag: `304` keeps it (no body
    /// read), a changed object is read again.
    @Test func revalidationAfterTheTTLKeepsOrRefetches() throws {
        let s3 = try store()
        let media = try bucket(s3)
        try s3.put(Self.rocket, bucket: media, encodedKey: "photo.jpg")
        let proxy = try LoopbackProxy(upstream: s3.port)
        defer { proxy.stop() }
        let calendar = ManualWallClock()
        let daemon = try S3TestDaemon(wallClock: calendar) {
            configure(&$0, s3, endpoint: "http://127.0.0.1:\(proxy.port)", buckets: [media])
            $0.service.diskStore.ttlSeconds = 0    // every load revalidates
            $0.service.memoryCacheBytes = 0        // every request loads
        }
        defer { daemon.stop() }
        let url = "s3://\(media)/photo.jpg"
        let first = daemon.get(thumbnail(url))
        #expect(first.status == 200 && first.headers["x-cache"] == "origin" && first.headers["x-image-width"] == "100")
        let bytes = daemon.stats("origin")["bytes"] ?? -1
        #expect(bytes == Self.rocket.count)

        calendar.advance(by: .seconds(1))   // past the 0-s TTL
        let kept = daemon.get(thumbnail(url))
        #expect(kept.status == 200 && kept.headers["x-cache"] == "disk", "\(kept.headers)")
        #expect(kept.headers["etag"] == first.headers["etag"] && kept.body == first.body)
        #expect(daemon.stats("origin")["bytes"] == bytes, "a 304 reads no body")
        let revalidation = proxy.requests.last { $0.contains("GET /\(media)/photo.jpg ") } ?? ""
        #expect(revalidation.lowercased().contains("\r\nif-none-match: \""), "\(revalidation)")

        try s3.put(Self.small, bucket: media, encodedKey: "photo.jpg")
        calendar.advance(by: .seconds(1))   // past the 0-s TTL
        let changed = daemon.get(thumbnail(url))
        #expect(changed.status == 200 && changed.headers["x-cache"] == "origin", "\(changed.headers)")
        #expect(changed.headers["x-image-width"] == "32" && changed.headers["x-image-height"] == "24")
        #expect(changed.headers["etag"] != first.headers["etag"])
        #expect(daemon.stats("origin")["bytes"] == bytes + Self.small.count)
    }

    /// A store that stops sending mid-body: `504` at `origin.timeoutSeconds`,
    /// logged, not remembered, and nothing of the body left on disk.
    @Test func aStoreStallingMidBodyIs504AndLeavesNothing() throws {
        let s3 = try store()
        let media = try bucket(s3)
        try s3.put(Self.rocket, bucket: media, encodedKey: "stall.jpg")
        let proxy = try LoopbackProxy(upstream: s3.port, stallAfter: 8192)   // the head and ~7.5 KiB of 110 KiB
        defer { proxy.stop() }
        let daemon = try S3TestDaemon {
            configure(&$0, s3, endpoint: "http://127.0.0.1:\(proxy.port)", buckets: [media])
            $0.service.origin.timeoutSeconds = 1.5
        }
        defer { daemon.stop() }
        let start = Date()
        let r = daemon.get(thumbnail("s3://\(media)/stall.jpg"))
        let seconds = Date().timeIntervalSince(start)
        #expect(r.status == 504 && errorCode(r.body) == "origin_timeout", "\(r.status)")
        #expect(seconds >= 1.4 && seconds < 5, "\(seconds) s")
        #expect(daemon.log.count == 1 && daemon.log.first?.contains("origin.timeoutSeconds") == true, "\(daemon.log)")
        let files = regularFiles(under: daemon.directory)
        #expect(files.isEmpty, "left in the store: \(files)")
        // Not remembered: the next request asks the store again.
        _ = daemon.get(thumbnail("s3://\(media)/stall.jpg"))
        #expect(proxy.connections == 2)
    }

    // MARK: - Virtual-host style

    /// `BUCKET.s3.test` against the real store (SeaweedFS's `-s3.domainName`),
    /// every name mapped to 127.0.0.1 by the fetcher's test resolver: the Host
    /// libcurl signs is the one the store checks.
    @Test func virtualHostStyleReadsFromTheRealStore() throws {
        let s3 = try store()
        let media = try bucket(s3)
        try s3.put(Self.rocket, bucket: media, encodedKey: "v%20h/a%2Bb.jpg")
        let daemon = try S3TestDaemon(fetcher: { service in
            Fetcher(policy: FetchPolicy(configuration: service), classify: AddressClassifier.classify,
                    resolve: { _, _ in ["127.0.0.1"] })
        }) {
            configure(&$0, s3, endpoint: "http://\(SeaweedS3.domain):\(s3.port)", buckets: [media])
            $0.service.s3.pathStyle = false
        }
        defer { daemon.stop() }
        let r = daemon.get(thumbnail("s3://\(media)/v h/a+b.jpg"))
        #expect(r.status == 200 && r.headers["x-image-width"] == "100", "\(r.status) \(String(decoding: r.body, as: UTF8.self))")
        #expect(daemon.get(thumbnail("s3://\(media)/v h/none.jpg")).status == 404)
    }
}
