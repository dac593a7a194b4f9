import Foundation
import Glibc

/// An `https` origin on loopback: Python's `http.server` wrapped in `ssl`,
/// started as a subprocess with a self-signed certificate made at test time
/// (`openssl req -x509`, valid for localhost, rebind.test and 127.0.0.1).
/// HTTP/1.1 keep-alive; every accepted (handshaken) connection is counted in
/// a file. Paths: `/cat.jpg` (ETag "v1", 304 to If-None-Match), `/close.jpg`
/// (the same bytes, then Connection: close), `/slow.jpg` (2 s), `/hop/N`.
public final class TLSOrigin: @unchecked Sendable {
    public let port: UInt16
    public let directory: String
    public var caFile: String { directory + "/cert.pem" }
    private let process: Process

    public init(host: String = "127.0.0.1", port requested: UInt16 = 0) throws {
        directory = NSTemporaryDirectory() + "thumbd-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                             "-days", "2", "-subj", "/CN=localhost",
                             "-addext", "subjectAltName=DNS:localhost,DNS:rebind.test,IP:127.0.0.1",
                             "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem"]
        openssl.standardError = FileHandle.nullDevice
        openssl.standardOutput = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else { throw POSIXError(.EIO) }
        try Self.script.write(toFile: directory + "/origin.py", atomically: true, encoding: .utf8)
        FileManager.default.createFile(atPath: directory + "/cat.jpg", contents: Data(TestOrigin.jpeg))

        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", directory + "/origin.py", directory, host, String(requested)]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line is the port; bounded: the script exits on its own after 120 s.
        var line: [UInt8] = []
        let fd = out.fileHandleForReading.fileDescriptor
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let end = Date().addingTimeInterval(10)
        while !line.contains(10), Date() < end {
            guard poll(&p, 1, 200) > 0 else { continue }
            var byte: UInt8 = 0
            guard read(fd, &byte, 1) == 1 else { break }
            line.append(byte)
        }
        guard let port = UInt16(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw POSIXError(.EADDRINUSE)
        }
        self.port = port
    }

    deinit {
        // SIGKILL: the test process may block SIGTERM, and children inherit the mask.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }

    public func url(_ path: String, host: String = "127.0.0.1") -> String { "https://\(host):\(port)\(path)" }

    /// TLS connections accepted so far.
    public var accepts: Int {
        Int((try? String(contentsOfFile: directory + "/accepts", encoding: .utf8)) ?? "0") ?? 0
    }

    private static let script = #"""
import http.server, os, ssl, sys, threading, time
directory, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
body = open(os.path.join(directory, "cat.jpg"), "rb").read()
lock = threading.Lock()
count = [0]

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass
    def send(self, status, headers, payload=b""):
        self.send_response(status)
        for k, v in headers: self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
    def do_GET(self):
        p = self.path
        if p in ("/cat.jpg", "/close.jpg"):
            if self.headers.get("If-None-Match") == '"v1"':
                return self.send(304, [("ETag", '"v1"')])
            extra = [("Connection", "close")] if p == "/close.jpg" else []
            if p == "/close.jpg": self.close_connection = True
            return self.send(200, [("Content-Type", "image/jpeg"), ("ETag", '"v1"')] + extra, body)
        if p == "/slow.jpg":
            time.sleep(2)
            return self.send(200, [("Content-Type", "image/jpeg")], body)
        if p.startswith("/hop/"):
            n = int(p[5:])
            return self.send(301, [("Location", "/hop/%d" % (n - 1) if n > 1 else "/cat.jpg")])
        self.send(404, [])

class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    def get_request(self):
        request = super().get_request()
        with lock:
            count[0] += 1
            with open(os.path.join(directory, "accepts.tmp"), "w") as f: f.write(str(count[0]))
            os.replace(os.path.join(directory, "accepts.tmp"), os.path.join(directory, "accepts"))
        return request

server = Server((host, port), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem"))
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
threading.Timer(120, lambda: os._exit(0)).start()
server.serve_forever()
"""#
}

/// A listening socket on 127.0.0.2 that nobody should ever reach: it never
/// accepts, so any connection made to it waits in its queue for `reached`.
public final class SilentListener {
    public let fd: Int32

    public init(host: String, port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        inet_pton(AF_INET, host, &a.sin_addr)
        let bound = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        // No close here: the object is whole, so a throw still runs deinit,
        // which closes it; closing here too closed a number some other socket
        // of the process had been given meanwhile (a churn client's: EBADF).
        guard bound == 0, listen(fd, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
    }

    deinit { close(fd) }

    /// Connections that reached the listener (each taken off the queue and closed).
    public func reached() -> Int {
        var n = 0
        while true {
            let c = accept(fd, nil, nil)
            if c < 0 { return n }
            close(c)
            n += 1
        }
    }
}
