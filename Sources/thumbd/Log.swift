import Foundation
import Glibc
import Synchronization
import ThumbService

/// One line per event on stderr, with a level; under journald (`JOURNAL_STREAM`
/// set) lines carry `<N>` syslog priorities instead of a timestamp, which the
/// journal adds itself (SPEC §10). The level and the access log follow reloads.
final class Log: Sendable {
    private struct Settings {
        var level: LogLevel
        var accessLog: Bool
    }

    private let settings: Mutex<Settings>
    private let journald = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil

    init(level: LogLevel, accessLog: Bool) {
        settings = Mutex(Settings(level: level, accessLog: accessLog))
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
            line = "\(Self.timestamp()) \(at.rawValue) \(message)\n"
        }
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// UTC with milliseconds, without a formatter object: the access log
    /// writes one per request.
    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let millis = Int(now.tv_nsec / 1_000_000)
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(ms)Z"
    }
}
