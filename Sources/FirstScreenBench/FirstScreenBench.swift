import Foundation
import ThumbClient

// The first screen of a list, timed (Tests/Benchmarks/first-screen.sh; Results.md § The first
// screen). ThumbClient used as a list uses it: a 3-column grid of 130-pt cells at scale 3
// (390 px thumbnails, cropped), the planner told of two screens of rows (18 visible, then 18
// ahead), and each of the first screen's cells asking for its row's facts (to lay out and paint
// the placeholder) and its thumbnail (to show), all at once, as cells appearing together do.
//
//   FirstScreenBench BASE_URL SOURCES_FILE
//
// SOURCES_FILE: one source URL a line, in row order (36 lines). Prints one line of
// `name=value` fields, times in ms from the planner's `rowsWillAppear`:
//   first_ms       the first row (of the 36) whose facts reached the list: the streamed answer's
//                  first line, plus the hops to the planner
//   facts_ms       every visible row has its facts
//   thumbs_ms      every visible row has its thumbnail
//   ratio          the median over visible rows of (its facts' time ÷ its thumbnail's time)
//   facts_first    visible rows whose facts came before their own thumbnail
//   errors         rows (visible facts and thumbnails) that failed; each is printed to stderr
// With FIRST_SCREEN_ROWS=1 in the environment, each visible row's two times go to stderr too.

@main
enum FirstScreenBench {
    static let visible = 18
    static let rows = 36

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count == 2, let base = URL(string: arguments[0]),
              let text = try? String(contentsOfFile: arguments[1], encoding: .utf8) else {
            FileHandle.standardError.write(Data("usage: FirstScreenBench BASE_URL SOURCES_FILE\n".utf8))
            exit(2)
        }
        let sources = text.split(separator: "\n").map(String.init)
        guard sources.count == rows else {
            FileHandle.standardError.write(Data("SOURCES_FILE must list \(rows) sources, not \(sources.count)\n".utf8))
            exit(2)
        }
        let client = ThumbClient(configuration: .init(baseURL: base))
        let planner = PrefetchPlanner<Int>(client: client) {
            ThumbnailSpec(source: sources[$0], width: 130, height: 130, scale: 3, fit: .cover)
        }
        let clock = ContinuousClock()
        let start = clock.now
        @Sendable func ms() -> Double {
            let d = clock.now - start
            return Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
        }

        await planner.rowsWillAppear(Array(0..<rows))
        // Each cell of the first screen asks for its facts and its thumbnail at once; the rows
        // ahead only wait for their facts (measured for the first line).
        let facts = (0..<rows).map { row in
            Task { () -> (Double, String?) in
                let result = await planner.facts(for: row)
                if case .failure(let error) = result { return (ms(), "row \(row) facts: \(error)") }
                return (ms(), nil)
            }
        }
        let thumbnails = (0..<visible).map { row in
            Task { () -> (Double, String?) in
                let result = await planner.thumbnail(for: row)
                if case .failure(let error) = result { return (ms(), "row \(row) thumbnail: \(error)") }
                return (ms(), nil)
            }
        }
        var factTimes: [Double] = [], thumbTimes: [Double] = [], errors: [String] = []
        for (row, task) in facts.enumerated() {
            let (t, error) = await task.value
            factTimes.append(t)
            if row < visible, let error { errors.append(error) }
        }
        for task in thumbnails {
            let (t, error) = await task.value
            thumbTimes.append(t)
            if let error { errors.append(error) }
        }
        let visibleFacts = Array(factTimes.prefix(visible))
        let ratios = zip(visibleFacts, thumbTimes).map { $0 / $1 }.sorted()
        let median = (ratios[ratios.count / 2 - 1] + ratios[ratios.count / 2]) / 2
        let factsFirst = zip(visibleFacts, thumbTimes).filter { $0 < $1 }.count
        for error in errors { FileHandle.standardError.write(Data((error + "\n").utf8)) }
        // FIRST_SCREEN_ROWS=1: each visible row's times on stderr, for profiling.
        if ProcessInfo.processInfo.environment["FIRST_SCREEN_ROWS"] == "1" {
            for row in 0..<visible {
                let name = sources[row].split(separator: "/").last ?? ""
                FileHandle.standardError.write(Data("row \(row) \(name) facts \(format(factTimes[row])) thumbnail \(format(thumbTimes[row]))\n".utf8))
            }
        }
        let fields: [(String, String)] = [
            ("first_ms", format(factTimes.min()!)), ("facts_ms", format(visibleFacts.max()!)),
            ("thumbs_ms", format(thumbTimes.max()!)), ("ratio", String(format: "%.3f", median)),
            ("facts_first", String(factsFirst)), ("errors", String(errors.count)),
        ]
        print(fields.map { "\($0.0)=\($0.1)" }.joined(separator: " "))
    }

    static func format(_ ms: Double) -> String { String(format: "%.1f", ms) }
}
