import Foundation
import Testing
@testable import ThumbFetch
@testable import ThumbAPI
@testable import ThumbJSON
@testable import ThumbService

/// The `s3` section (Configuration.md, S3Sources.md): defaults, what reaches the
/// fetcher, the secret read from a file on every parse, the rules across
/// keys, errors naming their key and never a secret, and `check-config`'s
/// output, which shows `(set)` or the file's path in the secret's place.
@Suite struct S3ConfigurationTests {
    private func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
        try DaemonConfiguration.parse(Array(text.utf8))
    }

    private func temporaryFile(_ contents: String) -> String {
        let path = NSTemporaryDirectory() + "thumbd-s3-secret-\(UUID().uuidString)"
        FileManager.default.createFile(atPath: path, contents: Data(contents.utf8))
        return path
    }

    @Test func theDefaultsAreOffWithNoBucketAllowed() throws {
        let s3 = try parse("{}").service.s3
        #expect(s3 == ServiceConfiguration.S3())
        #expect(s3.endpoint == nil && s3.region == "us-east-1" && s3.accessKeyId == nil && s3.secretAccessKey == nil)
        #expect(s3.secretAccessKeyFile == nil && s3.pathStyle && s3.allowedBuckets.isEmpty && s3.timeoutSeconds == 10)
        #expect(FetchPolicy(configuration: try parse("{}").service).s3 == nil)
    }

    @Test func aCompleteSectionReachesTheFetcher() throws {
        let c = try parse(#"""
            {"s3": {"endpoint": "https://S3.eu-west-1.amazonaws.com", "region": "eu-west-1", "accessKeyId": "AKIAEXAMPLE",
                    "secretAccessKey": "wJalrXUtnFEMI", "pathStyle": false, "allowedBuckets": ["media", "uploads.example"],
                    "timeoutSeconds": 2.5}}
            """#)
        let s3 = try #require(FetchPolicy(configuration: c.service).s3)
        #expect(s3.endpoint == (try S3Endpoint("https://s3.eu-west-1.amazonaws.com")))
        #expect(s3.region == "eu-west-1" && s3.sigV4 == "aws:amz:eu-west-1:s3" && s3.accessKeyId == "AKIAEXAMPLE")
        #expect(s3.secretAccessKey.revealed == "wJalrXUtnFEMI" && !s3.pathStyle)
        #expect(s3.allowedBuckets == ["media", "uploads.example"] && c.service.s3.timeoutSeconds == 2.5)
    }

    /// A key file of the fleet's key (`diskStore.shared.keyFile`), shared by the table below.
    static let keyFile: String = {
        let path = NSTemporaryDirectory() + "thumbd-shared-key-\(UUID().uuidString)"
        FileManager.default.createFile(atPath: path, contents: Data("fleetKEY-0123456789abcdef-0123456789abcdef\n".utf8))
        return path
    }()

    /// `diskStore.shared` (SeveralInstances.md): null by default; a bucket, a
    /// prefix (`thumbd/` unless given) and the fleet's keys reach the service,
    /// and the fetcher refuses the whole bucket as a source; `check-config`
    /// shows the key file's path, never a key.
    @Test func theSharedStoreIsConfiguredAndReserved() throws {
        #expect(try parse("{}").service.diskStore.shared == nil)
        #expect(try parse(#"{"diskStore": {"shared": null}}"#).service.diskStore.shared == nil)
        let c = try parse(#"{"diskStore": {"shared": {"bucket": "fleet", "keyFile": "\#(Self.keyFile)"}}, "s3": {"endpoint": "http://127.0.0.1:9000", "accessKeyId": "i", "secretAccessKey": "s", "allowedBuckets": ["media"]}}"#)
        let key = SharedStoreKey(Array("fleetKEY-0123456789abcdef-0123456789abcdef".utf8))
        #expect(c.service.diskStore.shared == SharedStoreLocation(bucket: "fleet", prefix: "thumbd/", keyFile: Self.keyFile, keys: [key]))
        var policy = FetchPolicy(configuration: c.service)
        #expect(policy.reserved == SharedStoreLocation(bucket: "fleet", prefix: "thumbd/"), "the fetcher gets no key")
        // Even where the configuration's rules were skipped (a bucket listed anyway), every key of it is refused.
        policy.s3?.allowedBuckets.append("fleet")
        for url in ["s3://fleet/thumbd/abc", "s3://fleet//thumbd/abc", "s3://fleet/%2Fthumbd/abc", "s3://fleet/public/abc"] {
            #expect(throws: FetchError.forbidden("bucket fleet holds the shared originals store, never a source")) {
                _ = try policy.s3Settings(for: S3Location(url))
            }
        }
        #expect(try policy.s3Settings(for: S3Location("s3://media/abc")).endpoint.port == 9000)
        let shown = c.json.serialized()
        #expect(shown.contains(#""shared":{"bucket":"fleet","prefix":"thumbd/","keyFile":"\#(Self.keyFile)"}"#), "\(shown)")
        #expect(!shown.contains("fleetKEY") && !"\(c)".contains("fleetKEY") && !String(reflecting: c).contains("fleetKEY"))
        // Read back, the file is read again: the same configuration.
        #expect(try DaemonConfiguration.parse(Array(c.json.serialized(indent: 2).utf8)).service.diskStore == c.service.diskStore)
    }

    /// The key file: one key per line (bytes as written, at least 32), at
    /// most two; read on every parse, so a reload rotates it. Refusals name
    /// the key and never quote the file's contents.
    @Test func theSharedKeyFileHoldsOneOrTwoKeys() throws {
        func config(_ contents: String?) -> String {
            let file = contents.map(temporaryFile) ?? "/nonexistent/shared.key"
            return #"{"diskStore": {"shared": {"bucket": "fleet", "keyFile": "\#(file)"}}, "s3": {"endpoint": "http://127.0.0.1:9000", "accessKeyId": "i", "secretAccessKey": "s"}}"#
        }
        let long = String(repeating: "k", count: 31) + "1", other = " spaces and\ttabs count, as written 2"
        let two = try parse(config(long + "\n" + other + "\n")).service.diskStore.shared?.keys
        #expect(two == [SharedStoreKey(Array(long.utf8)), SharedStoreKey(Array(other.utf8))])
        #expect(try parse(config(long)).service.diskStore.shared?.keys == [SharedStoreKey(Array(long.utf8))], "no final newline")
        // Every parse (start, each reload) reads the file again: a new key first, the old one second, rotates it.
        let file = temporaryFile(long + "\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let text = #"{"diskStore": {"shared": {"bucket": "fleet", "keyFile": "\#(file)"}}, "s3": {"endpoint": "http://127.0.0.1:9000", "accessKeyId": "i", "secretAccessKey": "s"}}"#
        let before = try parse(text)
        try Data((other + "\n" + long + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let after = try parse(text)
        #expect(after.service.diskStore.shared?.keys == [SharedStoreKey(Array(other.utf8)), SharedStoreKey(Array(long.utf8))])
        #expect(after != before, "a rotated key is a changed configuration")
        for bad in [nil, "", "\n", String(long.dropLast()), long + "\n" + "short\n", long + "\n\n" + long,
                    [long, long, long].joined(separator: "\n")] {
            do {
                _ = try parse(config(bad))
                Issue.record("accepted \(String(describing: bad))")
            } catch {
                #expect(error.key == "diskStore.shared.keyFile", "\(error)")
                #expect(!error.description.contains("kkkkk") && !error.description.contains("spaces"), "\(error)")
            }
        }
        #expect(throws: ConfigurationError.self) {
            try parse(#"{"diskStore": {"shared": {"bucket": "fleet"}}, "s3": {"endpoint": "http://127.0.0.1:9000", "accessKeyId": "i", "secretAccessKey": "s"}}"#)
        }
    }

    @Test func theSecretFileIsReadOnEveryParse() throws {
        let file = temporaryFile("first-secret\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let text = #"{"s3": {"endpoint": "http://127.0.0.1:9000", "accessKeyId": "id", "secretAccessKeyFile": "\#(file)"}}"#
        let first = try parse(text)
        #expect(first.service.s3.secretAccessKey?.revealed == "first-secret")
        #expect(first.service.s3.secretAccessKeyFile == file)
        try Data("rotated-secret".utf8).write(to: URL(fileURLWithPath: file))
        #expect(try parse(text).service.s3.secretAccessKey?.revealed == "rotated-secret")
        #expect(try parse(text) != first, "a rotated key is a changed configuration")
    }

    @Test(arguments: [
        (#"{"s3": {"endpoint": "ftp://store"}}"#, "s3.endpoint"),
        (#"{"s3": {"endpoint": "http://store/prefix", "accessKeyId": "i", "secretAccessKey": "s"}}"#, "s3.endpoint"),
        (#"{"s3": {"endpoint": 3}}"#, "s3.endpoint"),
        (#"{"s3": {"endpoint": "http://127.0.0.1:9000"}}"#, "s3.accessKeyId"),
        (#"{"s3": {"endpoint": "http://127.0.0.1:9000", "accessKeyId": "i"}}"#, "s3.secretAccessKey"),
        (#"{"s3": {"endpoint": "http://127.0.0.1:9000", "accessKeyId": "i", "secretAccessKey": "s", "secretAccessKeyFile": "/etc/hostname"}}"#,
         "s3.secretAccessKey"),
        (#"{"s3": {"secretAccessKeyFile": "/nonexistent/secret"}}"#, "s3.secretAccessKeyFile"),
        (#"{"s3": {"secretAccessKeyFile": "/dev/zero"}}"#, "s3.secretAccessKeyFile"),   // never read: it would not end
        (#"{"s3": {"secretAccessKeyFile": "/tmp"}}"#, "s3.secretAccessKeyFile"),
        (#"{"s3": {"secretAccessKey": ""}}"#, "s3.secretAccessKey"),
        (#"{"s3": {"accessKeyId": "has space"}}"#, "s3.accessKeyId"),
        (#"{"s3": {"region": "us-east-1:evil"}}"#, "s3.region"),
        (#"{"s3": {"region": ""}}"#, "s3.region"),
        (#"{"s3": {"pathStyle": "yes"}}"#, "s3.pathStyle"),
        (#"{"s3": {"endpoint": "http://127.0.0.1:9000", "accessKeyId": "i", "secretAccessKey": "s", "pathStyle": false}}"#,
         "s3.pathStyle"),
        (#"{"s3": {"allowedBuckets": ["Media"]}}"#, "s3.allowedBuckets"),
        (#"{"s3": {"allowedBuckets": "media"}}"#, "s3.allowedBuckets"),
        (#"{"s3": {"timeoutSeconds": 0}}"#, "s3.timeoutSeconds"),
        (#"{"s3": {"bucket": "media"}}"#, "s3.bucket"),
        (#"{"diskStore": {"shared": {"bucket": "media", "keyFile": "\#(Self.keyFile)"}}}"#, "diskStore.shared"),   // no s3.endpoint
        (#"{"diskStore": {"shared": {"bucket": "media"}}}"#, "diskStore.shared.keyFile"),
        (#"{"diskStore": {"shared": {"bucket": "media", "keyFile": "/nonexistent/key"}}}"#, "diskStore.shared.keyFile"),
        (#"{"diskStore": {"shared": {"bucket": "media", "keyFile": "/dev/zero"}}}"#, "diskStore.shared.keyFile"),
        (#"{"diskStore": {"shared": {"bucket": "media", "keyFile": 3}}}"#, "diskStore.shared.keyFile"),
        (#"{"diskStore": {"shared": {"bucket": "media", "keyFile": "\#(Self.keyFile)"}}, "s3": {"endpoint": "http://127.0.0.1:9000", "accessKeyId": "i", "secretAccessKey": "s", "allowedBuckets": ["other", "media"]}}"#,
         "s3.allowedBuckets"),   // the shared store's bucket is never a source
        (#"{"diskStore": {"shared": {"prefix": "x/"}}}"#, "diskStore.shared.bucket"),
        (#"{"diskStore": {"shared": {"bucket": "Media"}}}"#, "diskStore.shared.bucket"),
        (#"{"diskStore": {"shared": {"bucket": "media", "prefix": "/abs"}}}"#, "diskStore.shared.prefix"),
        (#"{"diskStore": {"shared": {"bucket": "media", "prefix": "a b"}}}"#, "diskStore.shared.prefix"),
        (#"{"diskStore": {"shared": {"bucket": "media", "prefix": "%2e%2e/"}}}"#, "diskStore.shared.prefix"),
        (#"{"diskStore": {"shared": {"bucket": "media", "keyFile": "\#(Self.keyFile)", "ttl": 3}}}"#, "diskStore.shared.ttl"),
        (#"{"diskStore": {"shared": "media"}}"#, "diskStore.shared"),
    ])
    func badValuesNameTheirKey(_ text: String, _ key: String) {
        do {
            _ = try parse(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.key == key, "\(error)")
        }
    }

    /// A refused secret is never quoted back, not even in part.
    @Test func errorsNeverQuoteASecret() {
        let file = temporaryFile("  \n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        for text in [#"{"s3": {"secretAccessKey": "topSECRET\u0001value"}}"#,
                     #"{"s3": {"endpoint": "http://[::1]:9", "accessKeyId": "i", "secretAccessKey": "topSECRETvalue", "pathStyle": false}}"#,
                     #"{"s3": {"secretAccessKeyFile": "\#(file)"}}"#] {
            do {
                _ = try parse(text)
                Issue.record("accepted \(text)")
            } catch {
                #expect(!error.description.contains("topSECRET"), "\(error)")
            }
        }
    }

    @Test func checkConfigShowsWhereTheSecretIsNeverWhatItIs() throws {
        let inline = try parse(#"{"s3": {"endpoint": "http://127.0.0.1:9000", "accessKeyId": "AKID", "secretAccessKey": "inlineSECRET", "allowedBuckets": ["media"]}}"#)
        let shown = inline.json.serialized(indent: 2)
        #expect(!shown.contains("inlineSECRET") && shown.contains(#""secretAccessKey": "(set)""#), "\(shown)")
        #expect(shown.contains(#""accessKeyId": "AKID""#) && shown.contains(#""secretAccessKeyFile": null"#))
        let again = try DaemonConfiguration.parse(Array(shown.utf8))
        #expect(again.service.s3.endpoint == inline.service.s3.endpoint && again.service.s3.allowedBuckets == ["media"])

        let file = temporaryFile("fileSECRET")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let fromFile = try parse(#"{"s3": {"endpoint": "http://127.0.0.1:9000", "accessKeyId": "AKID", "secretAccessKeyFile": "\#(file)"}}"#)
        let printed = fromFile.json.serialized(indent: 2)
        #expect(!printed.contains("fileSECRET") && printed.contains(#""secretAccessKey": null"#), "\(printed)")
        #expect(printed.contains(#""secretAccessKeyFile": "\#(file)""#))
        // Read back, the file is read again: the same configuration.
        #expect(try DaemonConfiguration.parse(Array(printed.utf8)).service.s3 == fromFile.service.s3)
        // And nothing else that prints a configuration shows it.
        #expect(!"\(fromFile)".contains("fileSECRET") && !String(reflecting: fromFile).contains("fileSECRET"))
    }
}
