import Foundation

/// What every libFuzzer target of thumbd shares (Tests/Fuzz/run-fuzzer.sh):
/// under `-DFUZZING`, libFuzzer's driver calling the target's one-input
/// function; in a plain build, a replay of the files named on the command line.
public enum FuzzDriver {
    public typealias Argv = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>

    /// Runs each file named on the command line through `one`; a missing file exits 1.
    public static func replay(_ one: ([UInt8]) -> Void) {
        for path in CommandLine.arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("cannot read \(path)\n".utf8))
                exit(1)
            }
            one([UInt8](data))
            print("ok \(path)")
        }
    }

    #if FUZZING
    /// Hands control to libFuzzer's driver with `one` as the target. SwiftPM
    /// renames an executable's entry point to `<module>_main`, so libFuzzer's
    /// own `main` is never used: each target's `<module>_main` calls this.
    public static func run(_ argc: CInt, _ argv: Argv, _ one: @escaping ([UInt8]) -> Void) -> CInt {
        target = one
        var argc = argc
        var argv = argv
        return LLVMFuzzerRunDriver(&argc, &argv) { fuzzerTestOneInput($0, $1) }
    }

    /// Set once, before libFuzzer starts calling; libFuzzer calls from one thread.
    nonisolated(unsafe) static var target: (([UInt8]) -> Void)?
    #endif
}

#if FUZZING
typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<FuzzDriver.Argv>,
                         _ callback: FuzzCallback) -> CInt

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzDriver.target?(bytes.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? [])
    return 0
}
#endif
