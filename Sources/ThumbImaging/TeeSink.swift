/// Feeds the same decoded rows to two sinks: one decode serves a render and
/// the original's canonical copy (its facts) when both want the same decode
/// scale, so the facts cost a second small scaler, not a second decode.
public struct TeeSink<First: ScanlineSink, Second: ScanlineSink>: ScanlineSink {
    public var first: First
    public var second: Second

    public init(_ first: First, _ second: Second) {
        self.first = first
        self.second = second
    }

    public mutating func begin(width: Int, height: Int, color: SourceColorSpace) {
        first.begin(width: width, height: height, color: color)
        second.begin(width: width, height: height, color: color)
    }

    public mutating func consume(_ rows: UnsafeRawBufferPointer, rowCount: Int) {
        first.consume(rows, rowCount: rowCount)
        second.consume(rows, rowCount: rowCount)
    }
}
