/// The collection-view prefetching pattern without a UI framework: told which
/// rows are about to appear and which have scrolled away, it asks thumbd for
/// the rows ahead — their facts in one streamed `info` call (layout and
/// placeholders, each row's the moment its line arrives), their thumbnails a
/// few at a time — and cancels what is no longer needed.
///
/// Visible rows go first: `thumbnail(for:)` (a cell on screen) starts its
/// request at once, whatever the prefetches; a row still waiting in the
/// prefetch line leaves it for that. Prefetches run at most
/// `maxConcurrentPrefetches` at a time (Nuke and Kingfisher run a few), so a
/// row two screens down never competes with the screen's own.
///
/// Wire `rowsWillAppear` to `prefetchItemsAt` (or SwiftUI's `onAppear` of rows
/// a screen ahead) and `rowsWillDisappear` to `cancelPrefetchingForItemsAt`;
/// a cell asks `facts(for:)` to lay out and `thumbnail(for:)` to show.
public actor PrefetchPlanner<Row: Hashable & Sendable> {
    /// What a row shows: its thumbnail spec (whose `source` is also its `/info` source).
    public typealias Describe = @Sendable (Row) -> ThumbnailSpec

    private let client: ThumbClient
    private let describe: Describe
    /// Prefetches running at once, at most.
    public let maxConcurrentPrefetches: Int
    private var tasks: [Row: Task<Result<Thumbnail, ThumbClientError>, Never>] = [:]
    /// Rows to prefetch, in order, not started yet.
    private var line: [Row] = []
    private var prefetchesRunning = 0
    private var facts: [String: ImageInfo] = [:]
    /// Sources whose facts a call of this planner is asking for now: not asked again meanwhile.
    private var asking: Set<String> = []
    /// Callers of `facts(for:)` waiting for a source this planner is asking for: answered by
    /// its line. (Asking the client instead could outrun the planner's own call, which reaches
    /// the client a hop later, and send the source in a batch of its own.)
    private var factsWaiters: [String: [CheckedContinuation<Result<ImageInfo, ThumbClientError>, Never>]] = [:]
    /// What the planner did, in order (for tests and diagnostics): rows whose
    /// thumbnail request started (prefetched or visible) and rows cancelled.
    public private(set) var started: [Row] = []
    public private(set) var cancelled: [Row] = []
    /// The most prefetches that ran at once.
    public private(set) var peakPrefetches = 0

    public init(client: ThumbClient, maxConcurrentPrefetches: Int = 3, describe: @escaping Describe) {
        self.client = client
        self.describe = describe
        self.maxConcurrentPrefetches = max(1, maxConcurrentPrefetches)
    }

    /// Rows about to appear, in the order they will: one streamed `info` for
    /// the sources whose facts are not known yet, and their thumbnails in the
    /// prefetch line.
    public func rowsWillAppear(_ rows: [Row]) {
        let new = rows.filter { tasks[$0] == nil && !line.contains($0) }
        guard !new.isEmpty else { return }
        askFacts(new)
        line += new
        pump()
    }

    /// Rows scrolled away before they appeared: their requests are cancelled.
    public func rowsWillDisappear(_ rows: [Row]) {
        for row in rows {
            if let i = line.firstIndex(of: row) {
                line.remove(at: i)
                cancelled.append(row)
            }
            guard let task = tasks.removeValue(forKey: row) else { continue }
            task.cancel()
            cancelled.append(row)
        }
    }

    /// A visible row's thumbnail: the prefetch's answer when it runs already,
    /// else a request now, ahead of every prefetch waiting.
    public func thumbnail(for row: Row) async -> Result<Thumbnail, ThumbClientError> {
        if let task = tasks[row] { return await task.value }
        if let i = line.firstIndex(of: row) { line.remove(at: i) } else { askFacts([row]) }
        return await start(row, prefetch: false).value
    }

    /// A row's facts when known (its aspect ratio, placeholder and focus); nil until its line came.
    public func info(for row: Row) -> ImageInfo? {
        facts[describe(row).source]
    }

    /// A row's facts, waiting for its line of the streamed answer (or asking now).
    public func facts(for row: Row) async -> Result<ImageInfo, ThumbClientError> {
        let source = describe(row).source
        if let known = facts[source] { return .success(known) }
        if asking.contains(source) {
            return await withCheckedContinuation { factsWaiters[source, default: []].append($0) }
        }
        let result = await client.facts(of: source)
        if case .success(let info) = result { facts[source] = info }
        return result
    }

    private func askFacts(_ rows: [Row]) {
        var seen = Set<String>()
        let unknown = rows.map { describe($0).source }
            .filter { facts[$0] == nil && !asking.contains($0) && seen.insert($0).inserted }
        guard !unknown.isEmpty else { return }
        asking.formUnion(unknown)
        Task {
            let answers = await client.info(unknown) { source, answer in
                Task { await self.learn(source, answer) }
            }
            self.doneAsking(unknown, answers)
        }
    }

    @discardableResult
    private func start(_ row: Row, prefetch: Bool) -> Task<Result<Thumbnail, ThumbClientError>, Never> {
        let spec = describe(row)
        started.append(row)
        if prefetch {
            prefetchesRunning += 1
            peakPrefetches = max(peakPrefetches, prefetchesRunning)
        }
        let task = Task { [client] () -> Result<Thumbnail, ThumbClientError> in
            let result: Result<Thumbnail, ThumbClientError>
            do throws(ThumbClientError) {
                result = .success(try await client.thumbnail(spec))
            } catch {
                result = .failure(error)
            }
            if prefetch { self.prefetchEnded() }
            return result
        }
        tasks[row] = task
        return task
    }

    private func pump() {
        while prefetchesRunning < maxConcurrentPrefetches, !line.isEmpty {
            start(line.removeFirst(), prefetch: true)
        }
    }

    private func prefetchEnded() {
        prefetchesRunning -= 1
        pump()
    }

    /// A source's answer, from its line or the call's end, whichever comes first: kept when
    /// facts, and handed to the rows waiting for it.
    private func learn(_ source: String, _ answer: Result<ImageInfo, ThumbClientError>) {
        if case .success(let info) = answer, facts[source] == nil { facts[source] = info }
        for waiter in factsWaiters.removeValue(forKey: source) ?? [] { waiter.resume(returning: answer) }
    }

    /// The call has answered every source: none is left waiting.
    private func doneAsking(_ sources: [String], _ answers: [String: Result<ImageInfo, ThumbClientError>]) {
        for source in sources {
            learn(source, answers[source] ?? .failure(.cancelled))
            asking.remove(source)
        }
    }
}
