import Foundation

/// Polls `condition` every 5 ms until it holds (true) or `seconds` pass (false):
/// the HTTP tests' one way to wait for the server's asynchronous work.
func waitUntil(seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() { if Date() > deadline { return false }; usleep(5000) }
    return true
}
