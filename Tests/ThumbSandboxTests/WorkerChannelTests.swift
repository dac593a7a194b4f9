import CThumbSandbox
import Glibc
import Testing
@testable import ThumbSandbox

/// The daemon–worker channel against the real kernel: frames, descriptors,
/// timeouts, a peer's close, and no descriptor leaked by a refused frame.
@Suite struct WorkerChannelTests {
    @Test func aFrameCarriesTwoMemfdsWhoseBytesArriveExactly() throws {
        let (daemon, worker) = try WorkerChannel.pair()
        let original = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let small: [UInt8] = [0xFF, 0x00, 0x7F]
        do {
            let first = try SharedMemory.sealed(name: "original", bytes: original)
            let second = try SharedMemory.sealed(name: "small", bytes: small)
            try daemon.send(Array("job 1".utf8), fds: [try #require(first.rawValue), try #require(second.rawValue)])
        }   // the sender's copies close here; the frame keeps the memfds alive
        let frame = try worker.receive(timeout: .seconds(5), maxBytes: 64)
        #expect(frame.bytes == Array("job 1".utf8))
        try #require(frame.fds.count == 2)
        let fds = try frame.fds.map { try #require($0.rawValue) }
        #expect(try SharedMemory.readSealed(fds[0], maxBytes: 1 << 20) == original)
        #expect(try SharedMemory.readSealed(fds[1], maxBytes: 3) == small)
        for fd in fds { #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0, "received descriptors never reach a child") }
    }

    @Test func receiveTimesOutAfterAboutTheTimeGiven() throws {
        let (daemon, worker) = try WorkerChannel.pair()
        defer { withExtendedLifetime(worker) {} }   // an open but silent peer
        let clock = ContinuousClock()
        let start = clock.now
        #expect(throws: SandboxError.timedOut) { try daemon.receive(timeout: .milliseconds(200), maxBytes: 16) }
        let elapsed = clock.now - start
        #expect(elapsed >= .milliseconds(150) && elapsed < .seconds(2), "\(elapsed)")
        #expect(throws: SandboxError.timedOut) { try daemon.receive(timeout: .zero, maxBytes: 16) }
    }

    @Test func aPeerThatClosedGivesClosedAndSendingToItGivesEPIPE() throws {
        let (daemon, worker) = try WorkerChannel.pair()
        try worker.send([1, 2, 3])
        worker.close()
        // A frame sent before the close still arrives, then the end of stream.
        #expect(try daemon.receive(timeout: .seconds(5), maxBytes: 16).bytes == [1, 2, 3])
        #expect(throws: SandboxError.closed) { try daemon.receive(timeout: .seconds(5), maxBytes: 16) }
        // MSG_NOSIGNAL: an error, not a SIGPIPE that would end this process.
        #expect(throws: SandboxError.system("sendmsg", EPIPE)) { try daemon.send([1]) }
    }

    @Test func aFrameOverMaxBytesIsTruncatedLeaksNoDescriptorAndTheNextArrivesWhole() throws {
        let (daemon, worker) = try WorkerChannel.pair()
        let name = uniqueMemfdName("truncated")
        do {
            let first = try SharedMemory.sealed(name: name, bytes: [1])
            let second = try SharedMemory.sealed(name: name, bytes: [2])
            try daemon.send([UInt8](repeating: 9, count: 100), fds: [try #require(first.rawValue), try #require(second.rawValue)])
            try daemon.send([UInt8](repeating: 8, count: 10), fds: [try #require(first.rawValue), try #require(second.rawValue)])
        }
        #expect(descriptorsOfMemfd(named: name) == 0, "in flight, not in this process's table")
        #expect(throws: SandboxError.truncated) { try worker.receive(timeout: .seconds(5), maxBytes: 99) }
        #expect(descriptorsOfMemfd(named: name) == 0, "the truncated frame's descriptors were closed")

        let next = try worker.receive(timeout: .seconds(5), maxBytes: 99)
        #expect(next.bytes == [UInt8](repeating: 8, count: 10) && next.fds.count == 2)
        #expect(descriptorsOfMemfd(named: name) == 2, "the check sees received memfds")
    }

    @Test func aFrameWithMoreDescriptorsThanAllowedIsRefusedWithoutALeak() throws {
        let (daemon, worker) = try WorkerChannel.pair()
        let name = uniqueMemfdName("toomany")
        do {
            let memory = try SharedMemory.sealed(name: name, bytes: [1, 2])
            let fd = try #require(memory.rawValue)
            try daemon.send([1], fds: [fd, fd, fd])
            try daemon.send([2], fds: [fd])
        }
        #expect(throws: SandboxError.truncated) { try worker.receive(timeout: .seconds(5), maxBytes: 16, maxDescriptors: 2) }
        #expect(descriptorsOfMemfd(named: name) == 0)
        let next = try worker.receive(timeout: .seconds(5), maxBytes: 16, maxDescriptors: 2)
        #expect(next.bytes == [2] && next.fds.count == 1)
        #expect(try SharedMemory.readSealed(try #require(next.fds[0].rawValue), maxBytes: 2) == [1, 2])
    }

    @Test func anEmptyFrameOrMoreThanFourDescriptorsIsRefusedBySend() throws {
        let (daemon, _) = try WorkerChannel.pair()
        #expect(throws: SandboxError.system("sendmsg", EINVAL)) { try daemon.send([]) }
        #expect(throws: SandboxError.system("sendmsg", EINVAL)) { try daemon.send([1], fds: [0, 0, 0, 0, 0]) }
    }

    @Test func aClosedEndRefusesEveryCall() throws {
        let (daemon, _) = try WorkerChannel.pair()
        daemon.close()
        #expect(daemon.fileDescriptor == nil)
        #expect(throws: SandboxError.system("sendmsg", EBADF)) { try daemon.send([1]) }
        #expect(throws: SandboxError.system("recvmsg", EBADF)) { try daemon.receive(timeout: .zero, maxBytes: 1) }
    }

    @Test func timeoutsRoundUpToWholeMilliseconds() {
        #expect(WorkerChannel.milliseconds(.zero) == 0)
        #expect(WorkerChannel.milliseconds(.microseconds(1)) == 1)
        #expect(WorkerChannel.milliseconds(.milliseconds(200)) == 200)
        #expect(WorkerChannel.milliseconds(.seconds(-1)) == 0)
        #expect(WorkerChannel.milliseconds(.seconds(1 << 40)) == Int32.max)
    }
}
