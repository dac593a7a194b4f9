import FuzzDriver
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
@_cdecl("FuzzJSON_main")
func fuzzMain(_ argc: CInt, _ argv: FuzzDriver.Argv) -> CInt { FuzzDriver.run(argc, argv, fuzzOne) }
#else
@main
struct Replay {
    static func main() { FuzzDriver.replay(fuzzOne) }
}
#endif
