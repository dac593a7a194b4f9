/// What a value keeps on the heap, in the bytes glibc's malloc hands out for
/// it. A cache whose limit is in bytes counts these in each entry's cost, or
/// its figure drifts away from the memory it really holds: a 1×1 rendition
/// of a 2 KB URL costs 4 bytes of pixels and about 2.5 KB of RAM
/// (Statistics.md `memoryCache.bytes`).
package protocol HeapFootprint {
    /// Bytes of heap this value holds beyond its inline size (`MemoryLayout`).
    var heapBytes: Int { get }
}

/// The arithmetic behind `HeapFootprint`, for 64-bit glibc.
package enum Heap {
    /// A `malloc(n)` block: glibc adds an 8-byte size word and rounds the
    /// chunk up to 16 bytes, at least 32.
    package static func allocation(_ n: Int) -> Int {
        n <= 0 ? 0 : max(32, (n + 8 + 15) & ~15)
    }

    /// Swift's heap-object header (isa pointer and reference counts).
    static let objectHeader = 16

    /// A String's storage: nothing when it fits in the String itself (15
    /// UTF-8 bytes on 64-bit), else an object with a 32-byte header (object
    /// header, capacity and count words), the bytes and a NUL. Strings a cache
    /// keeps for long are built without growth slack (`URLNormalization`
    /// assembles its result in one buffer), so count is capacity; a literal
    /// (no heap at all) is counted as if it had some, which errs high.
    package static func string(_ s: String) -> Int {
        let n = s.utf8.count
        return n <= 15 ? 0 : allocation(objectHeader + 16 + n + 1)
    }

    /// An array's buffer: a 32-byte header (object header, count, capacity)
    /// and its capacity, not its count, since appending leaves slack.
    /// Empty arrays share one static buffer.
    package static func array<Element>(_ a: [Element]) -> Int {
        a.capacity == 0 ? 0 : allocation(objectHeader + 16 + a.capacity * MemoryLayout<Element>.stride)
    }
}

extension String: HeapFootprint {
    package var heapBytes: Int { Heap.string(self) }
}

extension Array: HeapFootprint where Element == UInt8 {
    package var heapBytes: Int { Heap.array(self) }
}
