import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// `https` through URLSession (SPEC §1 allows it after the address check):
/// redirects are handed back to the Fetcher to re-check, and the download is
/// cancelled as soon as it passes the byte limit.
struct HTTPSClient {
    let policy: FetchPolicy

    func get(_ url: SourceURL, conditional: Conditional?, deadline: Double) throws(FetchError) -> OriginResponse {
        guard let target = URL(string: url.absolute) else { throw .badURL("url is not a valid URL") }
        var request = URLRequest(url: target)
        request.timeoutInterval = max(0.001, min(policy.connectTimeout, deadline - Date().timeIntervalSince1970))
        request.setValue("image/*", forHTTPHeaderField: "Accept")
        request.setValue("thumbd/0.1", forHTTPHeaderField: "User-Agent")
        if let etag = conditional?.etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let lm = conditional?.lastModified { request.setValue(lm, forHTTPHeaderField: "If-Modified-Since") }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForResource = max(0.001, deadline - Date().timeIntervalSince1970)
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        let delegate = Delegate(limit: policy.maxBytes)
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        session.dataTask(with: request).resume()
        guard delegate.done.wait(timeout: .now() + max(0, deadline - Date().timeIntervalSince1970) + 1) == .success else {
            throw .timeout("origin took longer than origin.timeoutSeconds")
        }
        return try delegate.result.withLock { $0 }!.get()
    }

    final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        let limit: Int
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<OriginResponse, FetchError>?>(nil)
        private var response = OriginResponse(status: 0, headers: [:], body: [])
        private var tooLarge = false

        init(limit: Int) { self.limit = limit }

        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
            completionHandler(nil)   // the Fetcher follows redirects itself, re-checking each hop
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive r: URLResponse,
                        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
            if let http = r as? HTTPURLResponse {
                response.status = http.statusCode
                for (k, v) in http.allHeaderFields { response.headers[String(describing: k).lowercased()] = String(describing: v) }
                if http.expectedContentLength > limit { tooLarge = true; return completionHandler(.cancel) }
            }
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            response.body += data
            if response.body.count > limit { tooLarge = true; dataTask.cancel() }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            let outcome: Result<OriginResponse, FetchError>
            if tooLarge {
                outcome = .failure(.tooLarge(limit: limit))
            } else if let error = error as? URLError {
                outcome = .failure(error.code == .timedOut ? .timeout("origin timed out") : .origin("https: \(error.localizedDescription)"))
            } else if let error {
                outcome = .failure(.origin("https: \(error)"))
            } else {
                outcome = .success(response)
            }
            result.withLock { $0 = outcome }
            done.signal()
        }
    }
}
