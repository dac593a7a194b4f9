import Foundation

/// The process's resident memory, for the hand-run footprint measurements
/// (`CacheFootprintMeasurement`): never asserted in a test, since every test
/// of the process shares it.
public enum ResidentMemory {
    /// Resident bytes now, from /proc/self/statm, after glibc has given back
    /// the free pages an earlier measurement left (else they are reused
    /// without RSS growing, and the next figure reads low).
    public static func bytes() -> Int {
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(symbol, to: Trim.self)(0) }
        let text = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// One line: RSS growth and counted bytes per entry, and their ratio.
    public static func report(_ what: String, entries: Int, rss: Int, counted: Int) {
        let n = Double(entries)
        print(String(format: "footprint %@: RSS %.0f B/entry, counted %.0f B/entry (counted/RSS %.2f)",
                     what, Double(rss) / n, Double(counted) / n, Double(counted) / Double(max(rss, 1))))
    }
}
