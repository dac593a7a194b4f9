import Foundation
import Glibc

/// This process's open descriptors, read from /proc: how tests see a
/// descriptor leak.
public enum ProcessDescriptors {
    /// How many descriptors are open now (other tests running in parallel
    /// open and close their own, so compare with some slack).
    public static var count: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }

    /// What this process's open descriptors point at (`/proc/self/fd`
    /// links: paths, with ` (deleted)` once unlinked; `socket:[…]`, …).
    public static var targets: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var target = [CChar](repeating: 0, count: 4096)
        return names.compactMap { name in
            let n = readlink("/proc/self/fd/\(name)", &target, target.count - 1)
            guard n > 0 else { return nil }
            return String(decoding: target[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// The TCP sockets this process holds whose local port is `port` and
    /// that are not listening: on a server's port, the server side of its
    /// connections. Exact whatever else runs: clients in this process have
    /// `port` as their remote port, not their local one.
    public static func serverSockets(port: UInt16) -> Int {
        let ours = socketInodes()
        var found = 0
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let text = readWhole(table)
            for line in text.split(separator: "\n").dropFirst() {
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
                let fields = line.split(separator: " ")
                guard fields.count > 9, let colon = fields[1].lastIndex(of: ":"),
                      UInt16(fields[1][fields[1].index(after: colon)...], radix: 16) == port,
                      fields[3] != "0A",   // LISTEN
                      let inode = Int(fields[9]), inode != 0, ours.contains(inode) else { continue }
                found += 1
            }
        }
        return found
    }

    /// A /proc file to its end: `String(contentsOfFile:)` stops after the
    /// first page (4 KiB) the kernel hands out, about 27 sockets' worth.
    private static func readWhole(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The inodes of the sockets among this process's descriptors.
    private static func socketInodes() -> Set<Int> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var inodes: Set<Int> = []
        var target = [CChar](repeating: 0, count: 64)
        for name in names {
            let n = readlink("/proc/self/fd/\(name)", &target, target.count - 1)
            guard n > 0 else { continue }
            let link = String(decoding: target[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // "socket:[12345]"
            guard link.hasPrefix("socket:["), let inode = Int(link.dropFirst(8).dropLast()) else { continue }
            inodes.insert(inode)
        }
        return inodes
    }
}
