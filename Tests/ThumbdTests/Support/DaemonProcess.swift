import Foundation
import Glibc
import ThumbTestSupport

/// The real `thumbd` binary, started with `posix_spawn` so that a test controls
/// exactly what the child inherits: its environment (the test runner's own
/// `NOTIFY_SOCKET`, `LISTEN_*`, `WATCHDOG_*` and `JOURNAL_STREAM` are removed
/// first), an optional listening socket placed at fd 3 (socket activation), a
/// default signal disposition and an empty signal mask, stdin and stdout on
/// /dev/null and stderr in a log file kept for diagnostics.
///
/// Always `defer { daemon.stop() }`: it SIGKILLs and reaps the child if it is
/// still there, and removes the log file.
final class DaemonProcess {
    enum Exit: Equatable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)
        var description: String {
            switch self {
            case .exited(let s): "exited with status \(s)"
            case .signaled(let s): "killed by signal \(s)\(s == SIGHUP ? " (SIGHUP: no handler installed?)" : "")"
            }
        }
    }

    static let removedVariables = ["NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES",
                                   "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM"]

    /// The binary under test: the `thumbd` built next to the tests, or
    /// `$THUMBD_LIFECYCLE_BINARY` to run the same tests against another build.
    static let binary = ProcessInfo.processInfo.environment["THUMBD_LIFECYCLE_BINARY"] ?? ThumbnailCommandTests.binary

    let pid: pid_t
    let stderrPath: String
    private(set) var exit: Exit?

    /// Starts `thumbd ARGS`. With `listenFD`, that descriptor becomes fd 3 in
    /// the child and the binary is exec'd through
    /// `/bin/sh -c 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" "$@"'`, so `LISTEN_PID`
    /// is the daemon's own pid, as systemd sets it.
    init(arguments: [String], environment extra: [String: String] = [:], listenFD: Int32? = nil,
         binary: String = DaemonProcess.binary) throws {
        stderrPath = "/tmp/thumbd-err-\(getpid())-\(UUID().uuidString.prefix(8)).log"

        var env = ProcessInfo.processInfo.environment
        for key in Self.removedVariables { env[key] = nil }
        env["HOME"] = NSTemporaryDirectory()   // never touch the real ~/.cache
        env.merge(extra) { $1 }

        let argv: [String]
        if listenFD != nil {
            argv = ["/bin/sh", "-c", #"LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" "$@""#, binary] + arguments
        } else {
            argv = [binary] + arguments
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        var heldCopy: Int32 = -1
        defer { if heldCopy >= 0 { Glibc.close(heldCopy) } }
        if var source = listenFD {
            if source == 3 {
                // dup2(3, 3) would keep FD_CLOEXEC on some libcs; hand over a copy instead.
                heldCopy = fcntl(source, F_DUPFD_CLOEXEC, 10)
                guard heldCopy >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EBADF) }
                source = heldCopy
            }
            posix_spawn_file_actions_adddup2(&actions, source, 3)   // dup2 clears FD_CLOEXEC on fd 3
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGHUP, SIGTERM, SIGINT, SIGPIPE, SIGUSR1, SIGUSR2, SIGCHLD] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        let cEnv: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { cArgs.forEach { free($0) }; cEnv.forEach { free($0) } }

        var child: pid_t = 0
        let r = posix_spawn(&child, argv[0], &actions, &attributes, cArgs, cEnv)
        guard r == 0 else { throw POSIXError(.init(rawValue: r) ?? .EIO) }
        pid = child
    }

    deinit { stop() }

    /// Convenience: `thumbd --config FILE`.
    convenience init(config: String, environment: [String: String] = [:], listenFD: Int32? = nil) throws {
        try self.init(arguments: ["--config", config], environment: environment, listenFD: listenFD)
    }

    /// Sends `signo` (SIGHUP, SIGTERM…) if the child has not been reaped yet.
    @discardableResult
    func signal(_ signo: Int32) -> Bool {
        guard exit == nil else { return false }
        return kill(pid, signo) == 0
    }

    /// Reaps the child without blocking; true once it has exited.
    private func reap() -> Bool {
        if exit != nil { return true }
        var status: Int32 = 0
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid {
            // WIFEXITED / WEXITSTATUS / WTERMSIG by hand: the Glibc macros are not imported.
            let low = status & 0x7f
            exit = low == 0 ? .exited((status >> 8) & 0xff) : .signaled(low)
            return true
        }
        if r < 0 && errno == ECHILD { exit = .signaled(0); return true }   // reaped elsewhere: should not happen
        return false
    }

    /// True while the child has not exited.
    var isRunning: Bool { !reap() }

    /// Waits up to `timeout` seconds (polling every 20 ms) for the child to exit.
    func waitForExit(timeout: Double) -> Exit? {
        let rounds = max(1, Int(timeout / 0.02))
        for _ in 0..<rounds {
            if reap() { return exit }
            usleep(20_000)
        }
        _ = reap()
        return exit
    }

    /// SIGKILLs the child if still running, reaps it, removes the log file. Idempotent.
    func stop() {
        if !reap() {
            kill(pid, SIGKILL)
            _ = waitForExit(timeout: 5)
        }
        unlink(stderrPath)
    }

    /// Everything the child wrote to stderr so far.
    var stderr: String {
        (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
    }

    /// Byte count of stderr so far: pass it to `waitForStderr(after:…)` to look only at later lines.
    var stderrMark: Int { stderr.utf8.count }

    /// Waits up to `timeout` seconds until stderr written after `mark` satisfies `match`;
    /// gives up early once the child has exited (after a last look).
    func waitForStderr(after mark: Int, timeout: Double, _ match: (String) -> Bool) -> Bool {
        let rounds = max(1, Int(timeout / 0.05))
        for _ in 0..<rounds {
            let alive = isRunning
            if match(stderr(after: mark)) { return true }
            if !alive { return false }
            usleep(50_000)
        }
        return match(stderr(after: mark))
    }

    /// Stderr written after byte `mark`.
    func stderr(after mark: Int) -> String {
        String(decoding: Array(stderr.utf8).dropFirst(mark), as: UTF8.self)
    }

    /// Waits until `/healthz` answers 200 on 127.0.0.1:`port` (fresh connection per try), at most `timeout` seconds.
    func waitUntilHealthy(port: UInt16, timeout: Double = 10) -> Bool {
        let rounds = max(1, Int(timeout / 0.05))
        for _ in 0..<rounds {
            if !isRunning { return false }
            if let c = HTTPConnection(port: port, timeout: 1) {
                defer { c.close() }
                if c.request("GET", "/healthz")?.status == 200 { return true }
            }
            usleep(50_000)
        }
        return false
    }
}

/// A raw HTTP/1.1 client on ONE TCP connection to 127.0.0.1, kept alive across
/// requests: it never reconnects, so a test can prove the server kept the
/// connection open (`localPort` stays the same, every request answered on it).
final class HTTPConnection {
    struct Response: CustomStringConvertible {
        let status: Int
        /// Header names lower-cased.
        let headers: [String: String]
        let body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
        /// `{"error": CODE, "message": TEXT}` fields, when the body is that JSON object.
        var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] }
        var errorCode: String? { json?["error"] as? String }
        var errorMessage: String? { json?["message"] as? String }
        var description: String { "\(status) \(text.prefix(300))" }
    }

    let port: UInt16
    let timeout: Double
    private var fd: Int32
    /// Local (client-side) port of the one connection.
    let localPort: UInt16
    private var buffer: [UInt8] = []
    /// Responses received on this connection.
    private(set) var answered = 0

    /// Connects to 127.0.0.1:`port` within `timeout` seconds; nil when refused or timed out.
    init?(port: UInt16, timeout: Double = 5) {
        self.port = port
        self.timeout = timeout
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard s >= 0 else { return nil }
        var a = Loopback.address(port: port)
        let r = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        if r != 0 {
            guard errno == EINPROGRESS else { Glibc.close(s); return nil }
            var p = pollfd(fd: s, events: Int16(POLLOUT), revents: 0)
            var err: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            guard poll(&p, 1, Int32(timeout * 1000)) == 1,
                  getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) == 0, err == 0 else { Glibc.close(s); return nil }
        }
        fd = s
        localPort = Loopback.boundPort(s)
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    var isOpen: Bool { fd >= 0 }

    /// Sends one request and reads its response on the same connection; nil on
    /// timeout, reset or close (the connection is then closed for good).
    func request(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = []) -> Response? {
        guard fd >= 0 else { return nil }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8) + body
        let deadline = Date().addingTimeInterval(timeout)
        guard sendAll(bytes, deadline: deadline), let response = readResponse(head: method == "HEAD", deadline: deadline) else {
            close()
            return nil
        }
        answered += 1
        return response
    }

    private func sendAll(_ bytes: [UInt8], deadline: Date) -> Bool {
        var offset = 0
        for _ in 0..<10_000 where offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { offset += n; continue }
            guard n < 0, errno == EAGAIN || errno == EINTR, wait(for: Int16(POLLOUT), deadline: deadline) else { return false }
        }
        return offset == bytes.count
    }

    private func wait(for events: Int16, deadline: Date) -> Bool {
        let left = deadline.timeIntervalSinceNow
        guard left > 0 else { return false }
        var p = pollfd(fd: fd, events: events, revents: 0)
        return poll(&p, 1, Int32(left * 1000) + 1) == 1
    }

    /// Appends what arrives to `buffer`; false on EOF, error or deadline.
    private func fill(deadline: Date) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        for _ in 0..<10_000 {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n > 0 { buffer += chunk[..<n]; return true }
            if n == 0 { return false }
            guard errno == EAGAIN || errno == EINTR, wait(for: Int16(POLLIN), deadline: deadline) else { return false }
        }
        return false
    }

    private func readResponse(head isHead: Bool, deadline: Date) -> Response? {
        let separator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        for _ in 0..<10_000 {
            if buffer.count >= 4, let i = (0...(buffer.count - 4)).first(where: { buffer[$0..<$0 + 4].elementsEqual(separator) }) {
                end = i
                break
            }
            guard fill(deadline: deadline) else { return nil }
        }
        guard let end else { return nil }
        let headText = String(decoding: buffer[..<end], as: UTF8.self)
        buffer.removeFirst(end + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var length = Int(headers["content-length"] ?? "0") ?? 0
        if isHead || status == 304 || status == 204 || (100..<200).contains(status) { length = 0 }
        for _ in 0..<100_000 where buffer.count < length {
            guard fill(deadline: deadline) else { return nil }
        }
        guard buffer.count >= length else { return nil }
        let body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return Response(status: status, headers: headers, body: body)
    }
}

/// Temp files for one daemon: a directory (the disk store) and its config file.
final class DaemonSandbox {
    let directory: String
    let configPath: String

    init(_ name: String) throws {
        var template = Array("/tmp/thumbd-\(name)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        directory = String(cString: made)
        configPath = directory + "/thumbd.json"
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    var storePath: String { directory + "/originals" }

    /// Writes the config file atomically (temp file + rename), as an operator's editor would.
    func write(_ json: String) throws {
        try Data(json.utf8).write(to: URL(fileURLWithPath: configPath), options: .atomic)
    }
}
