import FuzzDriver
import Foundation
import ThumbHTTP

// libFuzzer target over the request parser: the input is fed once whole and
// once in chunks whose sizes come from the input itself; both must give the
// same requests and the same error. Built by Tests/Fuzz/fuzz-http.sh; in a
// normal build it replays the files named on the command line.

func summary(_ bytes: [UInt8], chunked: Bool) -> [String] {
    var parser = RequestParser(maxHeaderBytes: 4096)
    var out: [String] = []
    var i = 0
    var step = 1
    while i < bytes.count {
        let n = chunked ? min(step, bytes.count - i) : bytes.count
        parser.append(bytes[i..<(i + n)])
        i += n
        step = Int(bytes[i - 1] % 17) + 1
        while let event = parser.next() {
            switch event {
            case .request(let r): out.append("\(r.method) \(r.target) \(r.path) \(r.query.count) \(r.headers.count) \(r.body.count)")
            case .error(let e): out.append("error \(e.status)")
            case .continueExpected: break   // depends on how the bytes were split, by design
            }
        }
    }
    return out
}

func fuzzOne(_ bytes: [UInt8]) {
    let whole = summary(bytes, chunked: false)
    let pieces = summary(bytes, chunked: true)
    precondition(whole == pieces, "chunked parsing differs: \(whole) vs \(pieces)")
}

#if FUZZING
@_cdecl("FuzzHTTPParser_main")
func fuzzMain(_ argc: CInt, _ argv: FuzzDriver.Argv) -> CInt { FuzzDriver.run(argc, argv, fuzzOne) }
#else
@main
struct Replay {
    static func main() { FuzzDriver.replay(fuzzOne) }
}
#endif
