import Foundation
import ThumbHTTP

// Serves one fixed body from memory on every path, for wrk:
//   HTTPBench PORT FILE
// Driven by Tests/Benchmarks/http-vs-nginx.sh; build with -c release.
@main
struct HTTPBench {
    static func main() throws {
        let args = CommandLine.arguments
        guard args.count == 3, let port = UInt16(args[1]), let data = FileManager.default.contents(atPath: args[2]) else {
            FileHandle.standardError.write(Data("usage: HTTPBench PORT FILE\n".utf8))
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
