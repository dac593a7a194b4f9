import Foundation
import ThumbJSON
import ThumbService

// libFuzzer target over the config reader: JSON text → ServiceConfiguration.
// `parse` may only throw its typed ConfigurationError (the signature says so;
// the fuzzer looks for traps: overflow, index, force-unwrap). A configuration
// that loads must print (`check-config`) as JSON that loads back to the same
// printed configuration. Built by Tests/Fuzz/fuzz-config.sh; in a normal build
// it replays the files named on the command line.

func fuzzOne(_ bytes: [UInt8]) {
    let config: ServiceConfiguration
    do {
        config = try ServiceConfiguration.parse(bytes)
    } catch {
        precondition(!error.description.isEmpty, "an error without a message")
        return
    }
    let printed = config.json.serialized(indent: 2)
    do {
        let again = try ServiceConfiguration.parse(Array(printed.utf8))
        precondition(again.json == config.json, "reloading the printed configuration changed it: \(printed)")
    } catch {
        // Printing masks secrets as "(set)"; a masked secret may not load back.
        precondition(printed.contains("\"(set)\""), "the printed configuration does not load (\(error)): \(printed)")
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
@_cdecl("FuzzConfig_main")
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
