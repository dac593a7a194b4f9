import Synchronization
import ThumbFetch
import ThumbClock
import ThumbHTTP
import ThumbRender
import ThumbSandbox
import ThumbService

/// The running service, assembled from one configuration: disk store,
/// fetcher, thumbnail service, HTTP handler and HTTP server. The `thumbd`
/// executable and the end-to-end tests start thumbd through this one type,
/// so the tests exercise the wiring that ships.
public final class Daemon: Sendable {
    public let service: ThumbnailService
    public let handler: ServiceHandler
    public let server: HTTPServer
    /// The daemon's own keys in force (`listen`, `http`, `security`, `log`);
    /// its `service` part is not kept here: the service holds the one copy.
    private let running: Mutex<DaemonConfiguration>
    /// What the daemon runs with: its own keys, and the service's configuration.
    public var configuration: DaemonConfiguration {
        var c = running.withLock { $0 }
        c.service = service.config
        return c
    }

    /// `fetcher`: nil downloads with the real `Fetcher` under the
    /// configuration's origin rules. `accessLog` is called after every
    /// response; keep it cheap. `warning`: the HTTP server's warnings
    /// (running out of descriptors), for the log.
    /// `engine`: nil runs every probe, decode and encode in sandboxed worker
    /// processes started from the thumbd binary (Isolation.md). `wallClock`
    /// dates fetched originals (a test moves a manual one to age them).
    public init(configuration: DaemonConfiguration, disk: DiskStore?, fetcher: (any OriginFetching)? = nil,
                engine: (any RenderEngine)? = nil, wallClock: any WallClock = SystemWallClock(),
                accessLog: (@Sendable (ResponseRecord) -> Void)? = nil,
                warning: (@Sendable (String) -> Void)? = nil) {
        running = Mutex(configuration)
        let core = configuration.service
        service = ThumbnailService(configuration: core,
                                   fetcher: fetcher ?? Fetcher(policy: FetchPolicy(configuration: core)),
                                   disk: disk, wallClock: wallClock,
                                   engine: engine ?? SandboxEngine(executable: WorkerExecutable.resolve(),
                                                                   maxIdle: RenderQueue.workerCount(core.workers),
                                                                   identity: try? configuration.sandbox.identity()))
        // The server owns the handler; the handler reads the server's figures and drain state
        // through each request's responder, so nothing points back from the handler to the server.
        let handler = ServiceHandler(service: service, security: configuration.security)
        self.handler = handler
        server = HTTPServer(configuration: configuration.http, application: HTTPApplication(
            handler: { handler.handle($0, $1) },
            screenHead: { handler.refusal(head: $0) },
            renderError: ErrorResponse.render,
            onResponse: { record in
                handler.record(record)
                accessLog?(record)
            },
            onWarning: warning))
    }

    /// Starts listening; the bound port for `inet` addresses (port 0 picks one).
    @discardableResult
    public func listen(_ address: ListenAddress) throws(SocketError) -> UInt16 {
        try server.listen(address)
    }

    /// Settings a reload cannot change while running.
    public static let restartOnlyKeys = ["listen", "workers", "diskStore.path"]

    /// Applies a re-read configuration (SIGHUP) without dropping a
    /// connection. Returns the restart-only keys that changed; those keep
    /// their running values.
    @discardableResult
    public func reload(_ configuration: DaemonConfiguration) -> [String] {
        var new = configuration
        let old = self.configuration
        let changed = [("listen", new.listen != old.listen), ("workers", new.service.workers != old.service.workers),
                       ("diskStore.path", new.service.diskStore.path != old.service.diskStore.path)]
            .filter(\.1).map(\.0)
        new.listen = old.listen
        new.service.workers = old.service.workers
        new.service.diskStore.path = old.service.diskStore.path
        // Reloads come one at a time (the SIGHUP handler), so reading and
        // storing need not be one locked step.
        running.withLock { $0 = new }
        // Before the service's reload, which retires the handler's shortcuts
        // past the signature: none may outlive the old key.
        handler.update(security: new.security)
        if let identity = try? new.sandbox.identity() { (service.engine as? SandboxEngine)?.update(identity: identity) }
        service.reload(new.service)
        server.update(new.http)
        return changed
    }

    /// Where the render workers' output lines go (at most 20 lines and 4 KiB
    /// a job each, prefixed with the worker's pid): the daemon's log.
    public func setWorkerLog(_ log: @escaping @Sendable (String) -> Void) {
        (service.engine as? SandboxEngine)?.setLog(log)
    }

    /// Graceful stop: no new connections, requests in flight finish within
    /// `deadline` seconds; `completion` runs once no connection is left and
    /// the idle render workers have ended (reaped, so none outlives its
    /// daemon even for the moment `PR_SET_PDEATHSIG` takes).
    public func drain(deadline: Double, completion: @escaping @Sendable () -> Void) {
        // Streamed `/info` answers end with a line for every item a little before the server
        // closes what is left at the deadline (API.md § POST /info, Streaming).
        handler.endStreams(after: deadline - min(1, deadline / 4))
        server.drain(deadline: deadline) { [service] in
            (service.engine as? SandboxEngine)?.shutdown()
            completion()
        }
    }
}
