import FuzzDriver
import ThumbCodec

// libFuzzer target over the structure walks (StructureWalk): every input goes
// through the walk of every format, whatever its magic bytes say, since a walk
// must refuse or pass any bytes without trapping, reading past the end or
// taking more than linear time; FrameCount's walks (GIF blocks, WebP RIFF
// chunks) too. Built by Tests/Fuzz/fuzz-structure.sh with
// -sanitize=fuzzer,address and -DFUZZING; in a normal build it replays the
// files named on the command line.

func fuzzOne(_ data: [UInt8]) {
    for format in ImageFormat.allCases {
        _ = try? StructureWalk.check(data, format: format)
        let frames = FrameCount.of(data, format: format)
        precondition(frames >= 1 && frames <= max(1, data.count / 8), "\(format): \(frames) frames in \(data.count) bytes")
    }
}

#if FUZZING
@_cdecl("FuzzStructure_main")
func fuzzMain(_ argc: CInt, _ argv: FuzzDriver.Argv) -> CInt { FuzzDriver.run(argc, argv, fuzzOne) }
#else
@main
struct Replay {
    static func main() { FuzzDriver.replay(fuzzOne) }
}
#endif
