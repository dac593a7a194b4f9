import Foundation

/// The real `thumbd` binary beside the test bundle, run as an operator would.
enum ThumbdBinary {
    /// Runs `thumbd ARGS` to its end: its exit status and what it printed.
    static func run(_ args: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ThumbnailCommandTests.binary)
        process.arguments = args
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Both pipes drained before waiting: a child blocked on a full pipe never exits.
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, stdout, stderr)
    }
}
