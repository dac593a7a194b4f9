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
typealias Argv = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<Argv>,
                         _ callback: FuzzCallback) -> CInt

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzOne(bytes.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? [])
    return 0
}

// SwiftPM links executables with their entry point renamed to <module>_main,
// so libFuzzer's own main is never used: hand control to its driver instead.
@_cdecl("FuzzHTTPParser_main")
func fuzzMain(_ argc: CInt, _ argv: Argv) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { fuzzerTestOneInput($0, $1) }
}
#else
@main
struct Replay {
    static func main() {
        for path in CommandLine.arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else { exit(1) }
            fuzzOne([UInt8](data))
            print("ok \(path)")
        }
    }
}
#endif
