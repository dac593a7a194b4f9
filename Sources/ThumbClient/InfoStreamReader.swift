import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads one streamed `POST /info` (API.md § POST /info, Streaming) line by
/// line as it arrives: a `URLSessionDataDelegate` of its own session, since
/// `URLSession.bytes(for:)` does not exist in Linux's Foundation. Each whole
/// line goes to `onLine` at once; the end (or the failure) of the body
/// resumes `run`. The session is invalidated when the body ends, so none
/// outlives its request. A body that is not `application/x-ndjson` (a JSON
/// answer: HTTP/1.0 on the way, an older thumbd, an error) is kept whole.
final class InfoStreamReader: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// What the request ended with: the status and, for an answer that was
    /// not streamed, its body.
    struct Outcome {
        var status: Int
        var streamed: Bool
        var body: Data
    }

    private let lock = NSLock()
    private let onLine: @Sendable (Data) -> Void
    private var pending = Data()
    private var streamed = false
    private var status = 0
    private var continuation: CheckedContinuation<Result<Outcome, ThumbClientError>, Never>?
    private var task: URLSessionDataTask?

    init(onLine: @escaping @Sendable (Data) -> Void) {
        self.onLine = onLine
    }

    /// Sends `request` on a session of its own (`configuration`'s settings) and reads its answer.
    func run(_ request: URLRequest, configuration: URLSessionConfiguration) async -> Result<Outcome, ThumbClientError> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { c in
                let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
                let task = session.dataTask(with: request)
                lock.lock()
                continuation = c
                self.task = task
                lock.unlock()
                task.resume()
                session.finishTasksAndInvalidate()
            }
        } onCancel: {
            lock.lock()
            let task = self.task
            lock.unlock()
            task?.cancel()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        lock.lock()
        status = http?.statusCode ?? 0
        streamed = status == 200 && (http?.value(forHTTPHeaderField: "Content-Type") ?? "")
            .lowercased().hasPrefix("application/x-ndjson")
        lock.unlock()
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.lock()
        pending.append(data)
        var lines: [Data] = []
        if streamed {
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(pending[pending.startIndex..<newline])
                pending.removeSubrange(pending.startIndex...newline)
            }
        }
        lock.unlock()
        for line in lines where !line.isEmpty { onLine(Data(line)) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.lock()
        let c = continuation
        continuation = nil
        let outcome = Outcome(status: status, streamed: streamed, body: pending)
        lock.unlock()
        if let error {
            c?.resume(returning: .failure(ThumbClientError.wrap(error)))
        } else {
            c?.resume(returning: .success(outcome))
        }
    }
}
