import Testing
@testable import ThumbService

private final class Payload {}

@Suite struct FIFOTests {
    /// Render jobs capture originals of up to 50 MB: a popped job that stayed
    /// in the array until the next compaction held up to 64 of them (issue 14).
    @Test func aPoppedElementIsReleasedAtOnce() {
        var queue = FIFO<Payload>()
        weak var first: Payload?
        do {
            let a = Payload(), b = Payload()
            first = a
            queue.append(a)
            queue.append(b)
        }
        #expect(queue.popFirst() != nil)
        #expect(first == nil)
        #expect(queue.count == 1)
    }

    /// A render's second job goes first: into the slot just popped, or in
    /// front of an array that has none.
    @Test func prependPutsAnElementFirstWithOrWithoutAConsumedPrefix() {
        var queue = FIFO<Int>()
        queue.prepend(0)
        queue.append(contentsOf: [1, 2, 3])
        queue.prepend(-1)
        #expect(queue.popFirst() == -1 && queue.popFirst() == 0)
        queue.prepend(9)
        #expect(queue.count == 4 && queue.first == 9)
        var rest: [Int] = []
        while let x = queue.popFirst() { rest.append(x) }
        #expect(rest == [9, 1, 2, 3])
    }

    @Test func orderSurvivesCompaction() {
        var queue = FIFO<Int>()
        var popped: [Int] = []
        for n in 0..<300 {
            queue.append(n)
            if n % 3 != 0, let x = queue.popFirst() { popped.append(x) }
        }
        while let x = queue.popFirst() { popped.append(x) }
        #expect(popped == Array(0..<300))
        #expect(queue.isEmpty)
    }

    @Test func removeTakesTheFirstMatchOnlyAmongWaitingElements() {
        var queue = FIFO<Int>()
        queue.append(contentsOf: [1, 2, 3, 2])
        _ = queue.popFirst()
        #expect(queue.remove(where: { $0 == 2 }) == 2)
        #expect(queue.popFirst() == 3)
        #expect(queue.popFirst() == 2)
        #expect(queue.popFirst() == nil)
    }
}
