import Foundation
import ThumbService

/// One line per event on stderr, with a level; under journald (`JOURNAL_STREAM`
/// set) lines carry `<N>` syslog priorities instead (SPEC §10).
struct Log: Sendable {
    let level: LogLevel
    let journald = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil

    func write(_ at: LogLevel, _ message: String) {
        guard at >= level else { return }
        let line: String
        if journald {
            let priority = switch at { case .debug: 7; case .info: 6; case .warning: 4; case .error: 3 }
            line = "<\(priority)>\(message)\n"
        } else {
            line = "\(ISO8601DateFormatter().string(from: Date())) \(at.rawValue) \(message)\n"
        }
        FileHandle.standardError.write(Data(line.utf8))
    }
}
