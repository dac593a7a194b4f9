import Foundation
import Glibc
import Synchronization
import ThumbAPI
import ThumbClock

/// One line per event on stderr, with a level; under journald (`JOURNAL_STREAM`
/// set) lines carry `<N>` syslog priorities instead of a timestamp, which the
/// journal adds itself (ServiceLife.md). The level and the access log follow reloads.
final class Log: Sendable {
    private struct Settings {
        var level: LogLevel
        var accessLog: Bool
    }

    private let settings: Mutex<Settings>
    private let journald = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil
    /// Where timestamps come from.
    private let wallClock: any WallClock

    init(level: LogLevel, accessLog: Bool, wallClock: any WallClock = SystemWallClock()) {
        settings = Mutex(Settings(level: level, accessLog: accessLog))
        self.wallClock = wallClock
    }

    func update(level: LogLevel, accessLog: Bool) {
        settings.withLock { $0 = Settings(level: level, accessLog: accessLog) }
    }

    var accessLogEnabled: Bool { settings.withLock { $0.accessLog } }

    func write(_ at: LogLevel, _ message: String) {
        guard at >= settings.withLock({ $0.level }) else { return }
        let line: String
        if journald {
            let priority = switch at { case .debug: 7; case .info: 6; case .warning: 4; case .error: 3 }
            line = "<\(priority)>\(message)\n"
        } else {
            line = "\(Self.timestamp(wallClock.sinceEpoch())) \(at.rawValue) \(message)\n"
        }
        Self.writeToStandardError(line)
    }

    /// Straight to fd 2, retrying short writes and ignoring errors: a journal
    /// that went away must not take the service down with it (FileHandle traps).
    private static func writeToStandardError(_ line: String) {
        var bytes = Array(line.utf8)
        var offset = 0
        bytes.withUnsafeMutableBytes { buffer in
            while offset < buffer.count {
                let n = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
            }
        }
    }

    /// A client-chosen string made safe for one log line: control bytes and
    /// backslashes escaped, so a decoded `%0A` cannot forge a second line.
    static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0x5C }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x5C: out += "\\\\"
            case 0..<0x20, 0x7F: out += "\\x" + (scalar.value < 16 ? "0" : "") + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// UTC with milliseconds, without a formatter object: the access log
    /// writes one per request.
    static func timestamp(_ sinceEpoch: Duration) -> String {
        let (wholeSeconds, attoseconds) = sinceEpoch.components
        var parts = tm()
        var seconds = time_t(wholeSeconds)
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let millis = Int(attoseconds / 1_000_000_000_000_000)
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(ms)Z"
    }
}
