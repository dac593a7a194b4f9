import Foundation
import Testing

/// `diskStore.shared.keyFile` seen from outside the real binary
/// (Configuration.md): required with `diskStore.shared`; a missing, short
/// or three-key file, or the shared bucket among `s3.allowedBuckets`, exits 2
/// in `check-config` and at start-up with a message naming the key; the
/// keys themselves are never printed.
@Suite struct SharedKeyFileTests {
    static let key = "SHAREDkey-" + UUID().uuidString

    private func config(_ box: DaemonSandbox, keyFile: String?, allowed: [String] = ["media"]) throws {
        let file = keyFile.map { #", "keyFile": "\#($0)""# } ?? ""
        try box.write(#"""
            {"listen": "127.0.0.1:1", "diskStore": {"path": "\#(box.storePath)",
               "shared": {"bucket": "fleet"\#(file)}},
             "s3": {"endpoint": "http://127.0.0.1:9", "accessKeyId": "id", "secretAccessKey": "s",
                    "allowedBuckets": [\#(allowed.map { "\"\($0)\"" }.joined(separator: ", "))]}}
            """#)
    }

    @Test func aGoodKeyFileIsShownByItsPathOnly() throws {
        let box = try DaemonSandbox("shared-key")
        let keyFile = box.directory + "/shared.key"
        try Data((Self.key + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))
        try config(box, keyFile: keyFile)
        let check = try ThumbdBinary.run(["check-config", "--config", box.configPath])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains(#""keyFile": "\#(keyFile)""#), "\(check.stdout)")
        #expect(!(check.stdout + check.stderr).contains("SHAREDkey"))
    }

    @Test func aBadKeyFileOrTheSharedBucketAsASourceExits2() throws {
        let box = try DaemonSandbox("shared-key")
        let cases: [(contents: String?, allowed: [String], key: String)] = [
            (nil, ["media"], "diskStore.shared.keyFile"),                                  // no keyFile
            ("", ["media"], "diskStore.shared.keyFile"),                                   // an empty file
            ("short\n", ["media"], "diskStore.shared.keyFile"),
            ([Self.key, Self.key, Self.key].joined(separator: "\n"), ["media"], "diskStore.shared.keyFile"),
            (Self.key, ["media", "fleet"], "s3.allowedBuckets"),
        ]
        for (n, c) in cases.enumerated() {
            var keyFile: String?
            if let contents = c.contents {
                keyFile = box.directory + "/key-\(n)"
                try Data(contents.utf8).write(to: URL(fileURLWithPath: keyFile!))
            }
            try config(box, keyFile: keyFile, allowed: c.allowed)
            for args in [["check-config", "--config", box.configPath], ["--config", box.configPath]] {
                let run = try ThumbdBinary.run(args)
                #expect(run.status == 2 && run.stderr.contains(c.key), "\(args) case \(n): \(run.status) \(run.stderr)")
                #expect(!(run.stdout + run.stderr).contains("SHAREDkey"), "case \(n)")
            }
        }
        // A missing file too.
        try config(box, keyFile: box.directory + "/nonexistent.key")
        let run = try ThumbdBinary.run(["check-config", "--config", box.configPath])
        #expect(run.status == 2 && run.stderr.contains("diskStore.shared.keyFile"), "\(run.stderr)")
    }
}
