import FuzzDriver
import CThumbCurl
import Foundation
import FuzzCurlShim
import ThumbFetch

// libFuzzer target over what we parse of an origin's answer ourselves: the
// C header callback (status, Content-Length, Transfer-Encoding, head cap),
// the body callback (byte limit, chunked decoding), then TransferOutcome's
// field parsing and, for a redirect, the Location resolution. The input is
// the response as it comes off the wire. The body is handed over whole and
// in pieces; both must give the same answer. Built by
// Tests/Fuzz/fuzz-origin.sh; in a normal build it replays the files named on
// the command line. (It reaches the fetcher's internals through `package`
// declarations, so a release build compiles it too.)

let maxBytes = 4096
let base = try! SourceURL("http://origin.test/images/a.jpg")

struct Seen: Equatable {
    var status: Int
    var flags: [Int32]
    var body: [UInt8]
    var head: [UInt8]
}

func run(_ bytes: [UInt8], pieces: UInt32, slot: Int32) -> (Seen, thumbd_result) {
    let raw = bytes.withUnsafeBufferPointer {
        fuzz_origin_response($0.baseAddress, $0.count, maxBytes, pieces, slot)!
    }
    let r = raw.assumingMemoryBound(to: thumbd_result.self).pointee
    var sunk = 0
    let sink = fuzz_origin_body(slot, &sunk)
    // What reached the sink before a cut at the limit depends on the cut: such a body counts as none.
    let body = r.too_large != 0 ? [] : sink.map { Array(UnsafeBufferPointer(start: $0, count: sunk)) } ?? []
    precondition(r.too_large != 0 || r.body_length == sunk, "body_length \(r.body_length), sink got \(sunk)")
    let head = r.head.map { Array(UnsafeRawBufferPointer(start: $0, count: r.head_length)) } ?? []
    let flags = [r.curl_code, r.too_large, r.bad_length, r.bad_chunk, r.head_too_large, r.body_skipped]
    return (Seen(status: r.status, flags: flags, body: body, head: head), r)
}

func fuzzOne(_ bytes: [UInt8]) {
    let (whole, result) = run(bytes, pieces: 0, slot: 0)
    let (cut, _) = run(bytes, pieces: 0x9E37_79B9 ^ UInt32(bytes.count), slot: 1)
    precondition(whole == cut, "the body's cut changed the answer: \(whole) vs \(cut)")
    precondition(whole.body.count <= maxBytes, "body of \(whole.body.count) bytes past the limit \(maxBytes)")
    precondition(whole.head.count <= Int(THUMBD_MAX_HEAD), "head of \(whole.head.count) bytes past the cap")
    precondition((0...999).contains(whole.status), "status \(whole.status)")

    let request = OriginRequest(url: base, headers: [], connectTimeout: 1, deadline: 0, maxBytes: maxBytes,
                                caFile: nil, urgent: false, classify: { _ in nil }, resolve: [])
    guard case .success(let response) = TransferOutcome.decide(result, request: request, refused: nil) else { return }
    precondition(response.bodyLength <= maxBytes, "answer body past the limit")
    for name in response.headers.keys { precondition(name == name.lowercased(), "field name \(name) not lower-cased") }
    if let location = response.headers["location"], (300..<400).contains(response.status) {
        if let next = try? base.resolve(location) {
            precondition(next.scheme == "http" || next.scheme == "https", "redirect to scheme \(next.scheme)")
            precondition(!next.host.isEmpty, "redirect to an empty host")
        }
    }
}

#if FUZZING
@_cdecl("FuzzOriginResponse_main")
func fuzzMain(_ argc: CInt, _ argv: FuzzDriver.Argv) -> CInt { FuzzDriver.run(argc, argv, fuzzOne) }
#else
@main
struct Replay {
    static func main() { FuzzDriver.replay(fuzzOne) }
}
#endif
