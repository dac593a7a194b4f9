import CThumbSandbox
import Glibc
import Testing
import ThumbSandbox

/// Sealed memfds and bounded reads against the real kernel.
@Suite struct SharedMemoryTests {
    @Test func aSealedMemfdCannotBeWrittenGrownShrunkOrUnsealed() throws {
        let content = Array("a worker's result".utf8)
        let memory = try SharedMemory.sealed(name: "sealed", bytes: content)
        let fd = try #require(memory.rawValue)
        #expect(thumbd_is_sealed(fd) == 1)

        #expect(pwrite(fd, "X", 1, 0) == -1 && errno == EPERM)
        #expect(pwrite(fd, "X", 1, off_t(content.count)) == -1 && errno == EPERM)
        #expect(ftruncate(fd, off_t(content.count * 2)) == -1 && errno == EPERM)
        #expect(ftruncate(fd, 1) == -1 && errno == EPERM)
        #expect(mmap(nil, content.count, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED && errno == EPERM)
        #expect(thumbd_seal(fd) == -EPERM, "F_SEAL_SEAL: no seal can be added, none removed")
        #expect(try SharedMemory.readSealed(fd, maxBytes: content.count) == content)
    }

    @Test func anUnsealedMemfdIsRefusedWhereASealedOneIsRequired() throws {
        let created = thumbd_memfd("unsealed")
        try #require(created >= 0)
        let memory = OwnedFileDescriptor(taking: created)
        #expect(pwrite(created, "abc", 3, 0) == 3)
        #expect(thumbd_is_sealed(created) == 0)
        #expect(throws: SandboxError.notSealed) { try SharedMemory.readSealed(created, maxBytes: 100) }
        #expect(try SharedMemory.readFile(created, maxBytes: 3) == Array("abc".utf8))
        _ = memory
    }

    @Test func contentOverTheBoundIsRefusedBeforeItIsRead() throws {
        let memory = try SharedMemory.sealed(name: "big", bytes: [UInt8](repeating: 1, count: 1000))
        let fd = try #require(memory.rawValue)
        #expect(throws: SandboxError.tooLarge(1000, limit: 999)) { try SharedMemory.readSealed(fd, maxBytes: 999) }
        #expect(try SharedMemory.readSealed(fd, maxBytes: 1000).count == 1000)
        let empty = try SharedMemory.sealed(name: "empty", bytes: [])
        #expect(try SharedMemory.readSealed(try #require(empty.rawValue), maxBytes: 0) == [])
    }

    @Test func aStoredFilePassedReadOnlyIsReadWhole() throws {
        var template = Array("/tmp/thumbd-sandbox-XXXXXX".utf8CString)
        let writer = mkstemp(&template)
        try #require(writer >= 0)
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(path) }
        let content = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 / 3) }
        #expect(write(writer, content, content.count) == content.count)
        close(writer)

        let reader = OwnedFileDescriptor(taking: open(path, O_RDONLY | O_CLOEXEC))
        let fd = try #require(reader.rawValue)
        #expect(try SharedMemory.readFile(fd, maxBytes: content.count) == content)
        #expect(throws: SandboxError.tooLarge(70_000, limit: 69_999)) { try SharedMemory.readFile(fd, maxBytes: 69_999) }
        #expect(throws: SandboxError.notSealed, "a file on disk cannot be sealed") {
            try SharedMemory.readSealed(fd, maxBytes: content.count)
        }
    }

    @Test func aPipeIsNotReadAsAFile() throws {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        #expect(throws: SandboxError.system("fstat: not a regular file", EINVAL)) {
            try SharedMemory.readFile(ends[0], maxBytes: 100)
        }
    }
}
