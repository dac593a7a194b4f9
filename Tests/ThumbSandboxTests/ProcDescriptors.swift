import Glibc

/// What /proc/<pid>/fd says about a process's descriptors: number → link
/// target ("/dev/null", "/memfd:NAME (deleted)", "socket:[…]").
func openDescriptors(of pid: pid_t = getpid()) -> [Int32: String] {
    let directory = "/proc/\(pid)/fd"
    guard let stream = opendir(directory) else { return [:] }
    defer { closedir(stream) }
    var found: [Int32: String] = [:]
    while let entry = readdir(stream) {   // bounded by the directory's entries
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard let number = Int32(name) else { continue }
        var target = [CChar](repeating: 0, count: 4096)
        let length = readlink("\(directory)/\(name)", &target, target.count - 1)
        found[number] = length > 0 ? String(decoding: target.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    }
    return found
}

/// How many of this process's descriptors refer to the memfd named `name`.
/// Counting by a unique name, not all descriptors, keeps the check exact
/// while other suites open and close descriptors in parallel.
func descriptorsOfMemfd(named name: String) -> Int {
    openDescriptors().values.filter { $0 == "/memfd:\(name) (deleted)" }.count
}

/// A memfd name no other test uses.
func uniqueMemfdName(_ purpose: String) -> String {
    "thumbd-test-\(purpose)-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
}

/// The content of a small text file, or nil.
func readText(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    for _ in 0..<256 {   // /proc files here are a few KiB at most
        let count = read(fd, &chunk, chunk.count)
        guard count > 0 else { break }
        bytes += chunk.prefix(count)
    }
    return String(decoding: bytes, as: UTF8.self)
}
