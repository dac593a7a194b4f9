import Foundation
import ThumbHTTP

// Serves one fixed body from memory on every path, for wrk:
//   HTTPBench PORT FILE
// Driven by Tests/Benchmarks/http-vs-nginx.sh; build with -c release.
// `HTTPBench --parse` instead times the request parser alone (one thread,
// no sockets), so parser changes can be compared on a machine too noisy for
// req/s: nanoseconds of CPU per request.
@main
struct HTTPBench {
    static func main() throws {
        let args = CommandLine.arguments
        if args.count == 2, args[1] == "--parse" {
            return ParseBench.run()
        }
        guard args.count == 3, let port = UInt16(args[1]), let data = FileManager.default.contents(atPath: args[2]) else {
            FileHandle.standardError.write(Data("usage: HTTPBench PORT FILE | HTTPBench --parse\n".utf8))
            exit(2)
        }
        let body = [UInt8](data)
        let server = HTTPServer(configuration: HTTPServerConfiguration()) { _, responder in
            responder.respond(HTTPResponse(status: 200, headers: [("Content-Type", "image/jpeg")], body: body))
        }
        try server.listen(.inet(host: "127.0.0.1", port: port))
        print("listening on 127.0.0.1:\(port)")
        dispatchMain()
    }
}
