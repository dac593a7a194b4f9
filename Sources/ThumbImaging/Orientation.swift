/// EXIF orientation (tag 0x0112): how the stored pixels must be transformed
/// to show the image upright. Raw values are the EXIF values 1…8.
public enum Orientation: Int, Sendable, CaseIterable, Codable {
    /// 1: stored upright.
    case up = 1
    /// 2: mirrored left-right.
    case upMirrored = 2
    /// 3: rotated 180°.
    case down = 3
    /// 4: mirrored top-bottom.
    case downMirrored = 4
    /// 5: transposed (mirror across the top-left/bottom-right diagonal).
    case leftMirrored = 5
    /// 6: stored rotated; turn 90° clockwise to display.
    case right = 6
    /// 7: transversed (mirror across the top-right/bottom-left diagonal).
    case rightMirrored = 7
    /// 8: stored rotated; turn 90° counter-clockwise to display.
    case left = 8

    /// Maps an EXIF value to an orientation; anything outside 1…8 counts as `.up`,
    /// as browsers and libvips do.
    public init(exifValue: Int) {
        self = Orientation(rawValue: exifValue) ?? .up
    }

    /// True for 5…8, where displayed width is the stored height.
    public var swapsAxes: Bool { rawValue >= 5 }

    /// Displayed size for a stored size.
    public func orientedSize(width: Int, height: Int) -> (width: Int, height: Int) {
        swapsAxes ? (height, width) : (width, height)
    }
}
