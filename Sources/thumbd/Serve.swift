import Dispatch
import Foundation
import Glibc
import ThumbHTTP
import ThumbService

/// `thumbd [--config FILE] [--listen ADDR]`: the service, in the foreground.
enum Serve {
    static func run(configPath: String?, listen: String?) -> Int32 {
        var config = ServiceConfiguration()
        if let configPath {
            do {
                config = try ServiceConfiguration.load(path: configPath)
            } catch {
                FileHandle.standardError.write(Data("thumbd: \(error)\n".utf8))
                return 2
            }
        }
        if let listen { config.listen = listen }
        let log = Log(level: config.log.level, accessLog: config.log.accessLog)
        guard var address = ListenAddress(config.listen) else {
            FileHandle.standardError.write(Data("thumbd: listen: '\(config.listen)' is not HOST:PORT or unix:/path\n".utf8))
            return 2
        }
        let env = ProcessInfo.processInfo.environment
        if let inherited = ListenAddress.inherited(listenFDs: env["LISTEN_FDS"], listenPID: env["LISTEN_PID"], pid: getpid()) {
            address = inherited
            unsetenv("LISTEN_FDS"); unsetenv("LISTEN_PID"); unsetenv("LISTEN_FDNAMES")
        }
        let storePath = config.diskStore.path ?? env["CACHE_DIRECTORY"].map { $0.split(separator: ":")[0] + "/originals" }
            ?? (NSHomeDirectory() + "/.cache/thumbd/originals")
        let disk: DiskStore
        do {
            disk = try DiskStore(directory: storePath, maxBytes: config.diskStore.maxBytes)
        } catch {
            log.write(.error, "disk store: \(error.message)")
            return 1
        }
        let service = ThumbnailService(configuration: config, fetcher: Fetcher(policy: FetchPolicy(configuration: config)), disk: disk)
        let box = ServerBox()
        let handler = ServiceHandler(service: service, serverStatistics: { box.server?.statistics ?? ServerStatistics() },
                                     isDraining: { box.server?.isDraining ?? false })
        let server = HTTPServer(configuration: config.http.server) { handler.handle($0, $1) }
        box.server = server
        server.onResponse = { r in
            handler.record(r)
            if log.accessLogEnabled {
                log.write(.info, "\(r.method) \(Log.escaped(r.path)) \(r.status) \(r.bodyBytes) \(String(format: "%.1f", r.milliseconds))ms \(r.cache ?? "-")")
            }
        }
        // Before listening: a reload or a stop may come as soon as systemd
        // sees the socket, and a client may leave before its answer is written.
        signal(SIGPIPE, SIG_IGN)
        Signals.on([SIGTERM, SIGINT]) {
            log.write(.info, "draining")
            SystemdNotifier.notify("STOPPING=1")
            server.drain(deadline: 10) {
                log.write(.info, "drained; exiting")
                exit(0)
            }
        }
        Signals.on([SIGHUP]) {
            Reload.run(path: configPath, listenOverride: listen, service: service, server: server, log: log)
        }
        do {
            try server.listen(address)
        } catch {
            log.write(.error, "cannot listen on \(address): \(error)")
            return 1
        }
        log.write(.info, "thumbd listening on \(address), originals in \(storePath)")
        SystemdNotifier.notify("READY=1")
        if let interval = Watchdog.interval(environment: env, pid: getpid()) {
            Watchdog(server: server, renders: service.renders, log: log).start(every: interval)
        }
        dispatchMain()
    }
}

/// Lets the handler reach the server it is handed to.
final class ServerBox: @unchecked Sendable {
    var server: HTTPServer?
}

extension ServiceConfiguration.HTTP {
    var server: HTTPServerConfiguration {
        HTTPServerConfiguration(maxConnections: maxConnections, maxHeaderBytes: maxHeaderBytes,
                                requestTimeoutSeconds: requestTimeoutSeconds, idleTimeoutSeconds: idleTimeoutSeconds)
    }
}
