/// A consumer of decoded scanlines, fed top row first.
///
/// Decoders push rows into a sink instead of returning a full bitmap, so a
/// large source can stream straight into a scaler: the full-size image never
/// has to exist in memory at once.
public protocol ScanlineSink {
    /// Called once, before any row, with the size of the image that will be
    /// streamed and how its samples map to sRGB (`.sRGB` unless the source
    /// carries a matrix/TRC colour profile).
    mutating func begin(width: Int, height: Int, color: SourceColorSpace)
    /// `rows` holds `rowCount` consecutive rows of `width * 4` bytes each:
    /// RGBA8, straight alpha, no padding. The buffer is only valid during the call.
    mutating func consume(_ rows: UnsafeRawBufferPointer, rowCount: Int)
}

extension ScanlineSink {
    /// Begins an image whose samples are sRGB.
    public mutating func begin(width: Int, height: Int) {
        begin(width: width, height: height, color: .sRGB)
    }
}

/// The simplest sink: collects every row into a `Bitmap`, converted to sRGB.
public struct BitmapSink: ScanlineSink {
    private var width = 0
    private var height = 0
    private var pixels: [UInt8] = []
    private var filled = 0
    private var color = SourceColorSpace.sRGB

    public init() {}

    public mutating func begin(width: Int, height: Int, color: SourceColorSpace) {
        self.width = width
        self.height = height
        self.color = color
        pixels = [UInt8](repeating: 0, count: width * height * 4)
        filled = 0
    }

    public mutating func consume(_ rows: UnsafeRawBufferPointer, rowCount: Int) {
        let bytes = rowCount * width * 4
        precondition(rows.count >= bytes && filled + bytes <= pixels.count, "more rows than announced")
        pixels.withUnsafeMutableBytes { dst in
            dst.baseAddress!.advanced(by: filled).copyMemory(from: rows.baseAddress!, byteCount: bytes)
            color.convertToSRGB(UnsafeMutableRawBufferPointer(rebasing: dst[filled..<(filled + bytes)]))
        }
        filled += bytes
    }

    /// The collected bitmap; nil when `begin` was never called or rows are missing.
    public func bitmap() -> Bitmap? {
        guard width > 0, height > 0, filled == pixels.count else { return nil }
        return Bitmap(width: width, height: height, pixels: pixels)
    }
}
