import Foundation
import ThumbClient

// A list page's worth of requests, built the way an app builds them (API.md §
// Using thumbd from a Swift app). Runs on Linux against any thumbd:
//
//   swift run ThumbClientExample http://127.0.0.1:8080 https://cdn.example/a.jpg https://cdn.example/b.jpg
//
// Add --dry-run to print the URLs without asking thumbd anything.

@main
enum ThumbClientExample {
    // An async main, not a semaphore, which would block the main actor the work needs; a
    // function's frame, not top-level code's, so that nothing of it outlives the run.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let dryRun = arguments.contains("--dry-run")
        let positional = arguments.filter { $0 != "--dry-run" }
        guard positional.count >= 2, let base = URL(string: positional[0]) else {
            FileHandle.standardError.write(Data("usage: ThumbClientExample BASE_URL SOURCE... [--dry-run]\n".utf8))
            exit(2)
        }
        let sources = Array(positional.dropFirst())

        // The deployment's sizes are client configuration; this app keeps to a width ladder.
        let client = ThumbClient(configuration: .init(baseURL: base, ladder: .widths([160, 320, 480, 640, 960])))
        // A row: a 160×120 pt cell at 3× (an iPhone), cropped on the subject.
        @Sendable func row(_ source: String) -> ThumbnailSpec {
            ThumbnailSpec(source: source, width: 160, height: 120, scale: 3, fit: .cover, gravity: .attention)
        }

        print("thumbnail URLs for \(sources.count) rows:")
        for source in sources {
            do {
                print("  " + (try client.builder.thumbnailURL(row(source)).absoluteString))
            } catch {
                print("  \(source): \(error)")
            }
        }
        if dryRun { return }

        do {
            // 1. Layout and placeholders for the whole page in one batch.
            let facts = await client.info(sources)
            for source in sources {
                switch facts[source] {
                case .success(let info)?:
                    let placeholder = info.placeholder.map { "\($0.width)×\($0.height) placeholder" } ?? "no placeholder"
                    print("info \(source): \(info.width)×\(info.height), aspect \(String(format: "%.3f", info.aspectRatio)), "
                          + "\(info.averageColor), \(placeholder), focus \(info.focus.x),\(info.focus.y)")
                case .failure(let error)?: print("info \(source): \(error)")
                case nil: print("info \(source): no answer")
                }
            }
            // 2. The rows of the first screen, through the planner; the rest would follow the scroll.
            let planner = PrefetchPlanner<Int>(client: client) { row(sources[$0]) }
            let firstScreen = Array(sources.indices.prefix(6))
            await planner.rowsWillAppear(firstScreen)
            for index in firstScreen {
                switch await planner.thumbnail(for: index) {
                case .success(let t):
                    print("thumbnail \(index): \(t.width ?? 0)×\(t.height ?? 0) \(t.contentType), \(t.bytes.count) bytes, "
                          + "X-Cache \(t.serverCache ?? "-")")
                case .failure(let error): print("thumbnail \(index): \(error)")
                }
            }
            // 3. Coming back to a row revalidates it: 304, the bytes kept.
            if let first = sources.first, let again = try? await client.thumbnail(row(first)) {
                print("again: revalidated \(again.revalidated), \(again.bytes.count) bytes")
            }
        }
    }
}
