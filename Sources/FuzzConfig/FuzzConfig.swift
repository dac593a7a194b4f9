import FuzzDriver
import Foundation
import ThumbJSON
import ThumbAPI

// libFuzzer target over the config reader: JSON text → DaemonConfiguration.
// `parse` may only throw its typed ConfigurationError (the signature says so;
// the fuzzer looks for traps: overflow, index, force-unwrap). A configuration
// that loads must print (`check-config`) as JSON that loads back to the same
// printed configuration. Built by Tests/Fuzz/fuzz-config.sh; in a normal build
// it replays the files named on the command line.

func fuzzOne(_ bytes: [UInt8]) {
    let config: DaemonConfiguration
    do {
        config = try DaemonConfiguration.parse(bytes)
    } catch {
        precondition(!error.description.isEmpty, "an error without a message")
        return
    }
    let printed = config.json.serialized(indent: 2)
    do {
        let again = try DaemonConfiguration.parse(Array(printed.utf8))
        precondition(again.json == config.json, "reloading the printed configuration changed it: \(printed)")
    } catch {
        // Printing masks secrets as "(set)"; a masked secret may not load back.
        precondition(printed.contains("\"(set)\""), "the printed configuration does not load (\(error)): \(printed)")
    }
}

#if FUZZING
@_cdecl("FuzzConfig_main")
func fuzzMain(_ argc: CInt, _ argv: FuzzDriver.Argv) -> CInt { FuzzDriver.run(argc, argv, fuzzOne) }
#else
@main
struct Replay {
    static func main() { FuzzDriver.replay(fuzzOne) }
}
#endif
