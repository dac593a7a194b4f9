/// A first-in, first-out queue on an array with a moving head: popping is
/// O(1), and the consumed prefix is dropped only once it is most of the
/// array, instead of shifting every element on every pop.
struct FIFO<Element> {
    private var storage: [Element] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }
    var first: Element? { isEmpty ? nil : storage[head] }

    mutating func append(_ element: Element) { storage.append(element) }

    mutating func append(contentsOf elements: some Sequence<Element>) { storage.append(contentsOf: elements) }

    mutating func popFirst() -> Element? {
        guard !isEmpty else { return nil }
        defer {
            head += 1
            if head > 64 && head * 2 > storage.count {
                storage.removeFirst(head)
                head = 0
            }
        }
        return storage[head]
    }

    /// Removes and returns the first waiting element that matches.
    mutating func remove(where matches: (Element) -> Bool) -> Element? {
        guard let index = storage[head...].firstIndex(where: matches) else { return nil }
        return storage.remove(at: index)
    }
}
