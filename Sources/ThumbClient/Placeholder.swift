import Foundation
import ThumbHashFormat

/// A ThumbHash turned back into a picture (the reference decoder's pixels):
/// at most 32 px a side, at the image's aspect ratio, straight-alpha RGBA.
/// An app scales it up into the row's frame, blurred, until the thumbnail arrives.
public struct Placeholder: Equatable, Sendable {
    public let width: Int, height: Int
    public let rgba: [UInt8]
    /// Width over height, to the format's precision.
    public let aspectRatio: Double
    /// The average colour and alpha, 0…1.
    public let average: (r: Double, g: Double, b: Double, a: Double)

    /// Nil for a hash that is not well formed (or not base64).
    public init?(thumbhash base64: String) {
        guard let data = Data(base64Encoded: base64) else { return nil }
        self.init(hash: Array(data))
    }

    public init?(hash: [UInt8]) {
        guard let image = ThumbHash.decode(hash), let ratio = ThumbHash.approximateAspectRatio(hash),
              let average = ThumbHash.averageRGBA(hash) else { return nil }
        width = image.width
        height = image.height
        rgba = image.rgba
        aspectRatio = ratio
        self.average = average
    }

    public static func == (a: Placeholder, b: Placeholder) -> Bool {
        a.width == b.width && a.height == b.height && a.rgba == b.rgba
    }
}

extension ImageInfo {
    /// The decoded `thumbhash`.
    public var placeholder: Placeholder? { Placeholder(thumbhash: thumbhash) }
}
