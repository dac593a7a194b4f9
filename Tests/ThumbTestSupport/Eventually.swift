import Foundation

/// Polls `condition` every 5 ms until it holds (true) or `seconds` pass
/// (false): the tests' one way to wait for work another thread or process
/// finishes. The bound is generous on purpose: it is how long a loaded CI
/// machine may take, not how long the work should take.
public func eventually(_ seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { return false }
        usleep(5000)
    }
    return true
}
