import ThumbHashFormat

extension ThumbHash {
    /// The hash of `image` (at most `maxSide` px a side; scale it down first).
    public static func encode(_ image: Bitmap) -> [UInt8] {
        encode(width: image.width, height: image.height, rgba: image.pixels)
    }
}
