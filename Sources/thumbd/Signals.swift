import Dispatch
import Glibc

/// Signals through Dispatch signal sources on the main queue: the work runs
/// as an ordinary block, never inside a signal handler.
enum Signals {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    static func on(_ signals: [Int32], _ action: @escaping @Sendable () -> Void) {
        for signo in signals {
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: .main)
            source.setEventHandler(handler: action)
            source.resume()
            sources.append(source)
        }
    }
}
