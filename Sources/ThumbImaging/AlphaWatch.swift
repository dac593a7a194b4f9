/// Passes a decode's rows on to `sink` and notes whether any pixel has alpha
/// below 255: `/info`'s `hasAlpha` is about the pixels, not the header's
/// flag (a PNG with an alpha channel that is opaque throughout says false).
///
/// Only sources whose header allows alpha need watching (`watching` false
/// passes rows on untouched); the scan stops once it has seen one such pixel.
public struct AlphaWatch<Sink: ScanlineSink>: ScanlineSink {
    public private(set) var sink: Sink
    public private(set) var sawAlpha = false
    private let watching: Bool
    private var width = 0

    public init(_ sink: Sink, watching: Bool = true) {
        self.sink = sink
        self.watching = watching
    }

    public mutating func begin(width: Int, height: Int, color: SourceColorSpace) {
        self.width = width
        sink.begin(width: width, height: height, color: color)
    }

    public mutating func consume(_ rows: UnsafeRawBufferPointer, rowCount: Int) {
        if watching && !sawAlpha {
            let count = min(rows.count, rowCount * width * 4)
            var i = 3
            while i < count {
                if rows[i] != 255 {
                    sawAlpha = true
                    break
                }
                i += 4
            }
        }
        sink.consume(rows, rowCount: rowCount)
    }
}
