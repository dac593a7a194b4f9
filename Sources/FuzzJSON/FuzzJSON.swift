import Foundation
import ThumbJSON

// libFuzzer target over the JSON parser (config files and /prefetch bodies
// reach it). Whatever parses must serialize to text that parses back to the
// same value, compact and pretty-printed alike; whatever fails must fail with
// an offset inside the input. Built by Tests/Fuzz/fuzz-json.sh; in a normal
// build it replays the files named on the command line.

func fuzzOne(_ bytes: [UInt8]) {
    let value: JSONValue
    do {
        value = try JSONParser.parse(bytes)
    } catch {
        precondition(error.offset >= 0 && error.offset <= bytes.count, "error offset \(error.offset) outside the input")
        return
    }
    for indent in [0, 2] {
        let text = value.serialized(indent: indent)
        do {
            let again = try JSONParser.parse(text)
            precondition(again == value, "round trip changed the value: \(text)")
        } catch {
            preconditionFailure("serialized value does not parse (\(error)): \(text)")
        }
    }
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
@_cdecl("FuzzJSON_main")
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
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("cannot read \(path)\n".utf8))
                exit(1)
            }
            fuzzOne([UInt8](data))
            print("ok \(path)")
        }
    }
}
#endif
