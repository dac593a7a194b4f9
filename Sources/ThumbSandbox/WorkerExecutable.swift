import Foundation

/// Which binary a daemon starts its workers from: thumbd itself
/// (`/proc/self/exe`, so a worker always matches its daemon, even after the
/// file on disk was replaced by an upgrade). A program that embeds `Daemon`
/// without being thumbd — the test runner — uses the `thumbd` built beside it.
public enum WorkerExecutable {
    public static func resolve() -> String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        if (own as NSString).lastPathComponent == "thumbd" { return "/proc/self/exe" }
        let directory = (own as NSString).deletingLastPathComponent
        // The test bundle's executable sits inside `<product>.xctest/` on some layouts: look up one level too.
        for candidate in [directory, (directory as NSString).deletingLastPathComponent] {
            let path = (candidate as NSString).appendingPathComponent("thumbd")
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return "/proc/self/exe"
    }
}
