import ThumbRender

/// A snapshot of the service's figures for `/stats` and `/metrics`: the
/// caches', the queue's and the service's own counters.
public struct ServiceStatistics: Equatable, Sendable {
    public var memory: MemoryCacheStatistics
    public var disk: DiskStore.Statistics
    public var counters: ServiceCounters
    public var render: RenderQueue.Statistics
    /// The render workers' kills and crashes (Isolation.md).
    public var engine: EngineCounts = EngineCounts()
    /// The shared originals store's look-ups and writes (SeveralInstances.md).
    public var shared = SharedStore.Statistics()
}
