/// A first-in, first-out queue on an array with a moving head: popping is
/// O(1), and the consumed prefix is dropped only once it is most of the
/// array, instead of shifting every element on every pop.
///
/// Slots are optional so that a popped element is released at once: render
/// jobs once captured the original's bytes (up to `limits.maxSourceBytes`
/// each), and a consumed prefix that kept them alive held up to 64 originals
/// outside every budget (issue 14); they now capture an open file, which a
/// kept slot would still hold open.
struct FIFO<Element> {
    private var storage: [Element?] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }
    var first: Element? { isEmpty ? nil : storage[head] }

    mutating func append(_ element: Element) { storage.append(element) }

    /// Puts `element` first (a render that must wait again goes ahead of new work).
    mutating func prepend(_ element: Element) {
        if head > 0 {
            head -= 1
            storage[head] = element
        } else {
            storage.insert(element, at: 0)
        }
    }

    mutating func append(contentsOf elements: some Sequence<Element>) {
        storage.append(contentsOf: elements.lazy.map { Optional($0) })
    }

    mutating func popFirst() -> Element? {
        guard !isEmpty else { return nil }
        let element = storage[head].take()
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Puts `element` just before the first waiting element that matches, or last.
    mutating func insert(_ element: Element, beforeFirst matches: (Element) -> Bool) {
        let index = storage[head...].firstIndex(where: { matches($0!) }) ?? storage.count
        if index == head { return prepend(element) }
        storage.insert(element, at: index)
    }

    /// Removes and returns the first waiting element that matches.
    mutating func remove(where matches: (Element) -> Bool) -> Element? {
        guard let index = storage[head...].firstIndex(where: { matches($0!) }) else { return nil }
        return storage.remove(at: index)
    }
}
