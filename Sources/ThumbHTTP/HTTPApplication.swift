/// What an `HTTPServer` serves, fixed when it is made: the handler that
/// answers requests and the application's say in what the server answers by
/// itself. One value, so a server is whole from its first line of code on and
/// nothing is wired into it afterwards.
public struct HTTPApplication: Sendable {
    /// Answers every request the server reads whole.
    public var handler: HTTPHandler
    /// Looks at the head of a request that waits for `100 Continue` before
    /// sending its body: a response refuses it at once (the connection closes
    /// after it), nil sends `100 Continue`. Must not block; it runs on a socket
    /// thread.
    public var screenHead: (@Sendable (HTTPRequest) -> HTTPResponse?)?
    /// Renders the errors the server answers itself (408, 413, 431, the
    /// no-room 503, …), so their body is the application's.
    public var renderError: HTTPError.Renderer
    /// Called after every response (access log); keep it cheap.
    public var onResponse: (@Sendable (ResponseRecord) -> Void)?
    /// Called with a message worth a warning-level log line (running out of
    /// descriptors); at most once per burst.
    public var onWarning: (@Sendable (String) -> Void)?

    public init(handler: @escaping HTTPHandler, screenHead: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil,
                renderError: @escaping HTTPError.Renderer = HTTPError.plainText,
                onResponse: (@Sendable (ResponseRecord) -> Void)? = nil,
                onWarning: (@Sendable (String) -> Void)? = nil) {
        self.handler = handler
        self.screenHead = screenHead
        self.renderError = renderError
        self.onResponse = onResponse
        self.onWarning = onWarning
    }
}
