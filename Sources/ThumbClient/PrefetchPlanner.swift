/// The collection-view prefetching pattern without a UI framework: told which
/// rows are about to appear and which have scrolled away, it asks thumbd for
/// the rows ahead — their facts in one `info` call (layout and placeholders),
/// their thumbnails one task each — and cancels what is no longer needed.
///
/// Wire `rowsWillAppear` to `prefetchItemsAt` (or SwiftUI's `onAppear` of rows
/// a screen ahead) and `rowsWillDisappear` to `cancelPrefetchingForItemsAt`;
/// a cell asks `thumbnail(for:)`, which joins the prefetch when there is one.
public actor PrefetchPlanner<Row: Hashable & Sendable> {
    /// What a row shows: its thumbnail spec (whose `source` is also its `/info` source).
    public typealias Describe = @Sendable (Row) -> ThumbnailSpec

    private let client: ThumbClient
    private let describe: Describe
    private var tasks: [Row: Task<Result<Thumbnail, ThumbClientError>, Never>] = [:]
    private var facts: [String: ImageInfo] = [:]
    /// Sources whose facts a call of this planner is asking for now: not asked again meanwhile.
    private var asking: Set<String> = []
    /// What the planner did, in order (for tests and diagnostics): rows asked for and rows cancelled.
    public private(set) var started: [Row] = []
    public private(set) var cancelled: [Row] = []

    public init(client: ThumbClient, describe: @escaping Describe) {
        self.client = client
        self.describe = describe
    }

    /// Rows about to appear: one `info` batch for the sources whose facts are
    /// not known yet, and a thumbnail request for each row not already asked for.
    public func rowsWillAppear(_ rows: [Row]) {
        let new = rows.filter { tasks[$0] == nil }
        guard !new.isEmpty else { return }
        let specs = new.map { ($0, describe($0)) }
        let unknown = Array(Set(specs.map(\.1.source))).filter { facts[$0] == nil && !asking.contains($0) }
        if !unknown.isEmpty {
            asking.formUnion(unknown)
            Task {
                let answers = await client.info(unknown)
                self.learn(answers)
            }
        }
        for (row, spec) in specs {
            started.append(row)
            tasks[row] = Task { [client] in
                do throws(ThumbClientError) {
                    return .success(try await client.thumbnail(spec))
                } catch {
                    return .failure(error)
                }
            }
        }
    }

    /// Rows scrolled away before they appeared: their requests are cancelled.
    public func rowsWillDisappear(_ rows: [Row]) {
        for row in rows {
            guard let task = tasks.removeValue(forKey: row) else { continue }
            task.cancel()
            cancelled.append(row)
        }
    }

    /// A row's thumbnail: the prefetch's answer when there is one, else a request now.
    public func thumbnail(for row: Row) async -> Result<Thumbnail, ThumbClientError> {
        if let task = tasks[row] { return await task.value }
        rowsWillAppear([row])
        return await tasks[row]?.value ?? .failure(.cancelled)
    }

    /// A row's facts once the batch that asked for them has answered: its
    /// aspect ratio, placeholder and focus.
    public func info(for row: Row) -> ImageInfo? {
        facts[describe(row).source]
    }

    private func learn(_ answers: [String: Result<ImageInfo, ThumbClientError>]) {
        for (source, answer) in answers {
            asking.remove(source)
            if case .success(let info) = answer { facts[source] = info }
        }
    }
}
