import CThumbCodec
import ThumbImaging

/// What a header probe learns without decoding pixels.
public struct ImageHeader: Sendable, Equatable, Codable {
    public enum ColorModel: Sendable, Equatable, Codable { case gray, rgb, ycc, cmyk, ycck, other }

    public let format: ImageFormat
    /// Stored width (before orientation).
    public let width: Int
    /// Stored height (before orientation).
    public let height: Int
    public let orientation: Orientation
    /// PNG with an alpha channel or tRNS; WebP, HEIF/AVIF with alpha; a GIF
    /// with a transparent index or a first frame that leaves part of the
    /// screen uncovered (likewise an animated WebP's canvas); JPEG never.
    public let hasAlpha: Bool
    /// A progressive JPEG or an Adam7-interlaced PNG: both must be held whole
    /// in memory while decoding. Also an interlaced GIF (its first frame is
    /// held as palette indices).
    public let isProgressive: Bool
    /// An animated WebP: its first frame is decoded onto the canvas. A JPEG
    /// XL of two displayed frames or more (its first is decoded).
    public let isAnimated: Bool
    /// Bits per sample: JPEG precision, PNG bit depth, HEIF/AVIF luma bits (decoded to 8), else 8.
    public let bitDepth: Int
    public let colorModel: ColorModel
    /// JPEG components (1, 3 or 4); 4 for PNG (decoded as RGBA).
    public let components: Int
    /// A lossless WebP (libwebp decodes it through a whole-image ARGB buffer).
    public let isLossless: Bool
    /// The `maxPixels` the probe was given; the HEIF decoder needs it again.
    let pixelLimit: Int
    /// A GIF or WebP of two frames or more (SPEC §14); nil for a still image
    /// and for every JPEG XL (whose animations give their first frame only).
    public let animation: AnimationFacts?
    /// The frames in the file (SPEC §12 `frames`): a GIF's or WebP's
    /// `animation.frames`; a JPEG XL's displayed frames, counted by the probe
    /// from libjxl's frame events without pixels; else 1.
    public let frames: Int
    /// AVIF and HEIC: what the structure walk learnt (which library decodes
    /// the file, its grid tiles); nil for other formats.
    let isobmff: ISOBMFFLayout?

    init(format: ImageFormat, info: thumbd_image_info, pixelLimit: Int = .max, isobmff: ISOBMFFLayout? = nil,
         animation: AnimationFacts? = nil, frames: Int? = nil) {
        self.format = format
        self.isobmff = isobmff
        self.animation = animation
        self.frames = max(1, frames ?? animation?.frames ?? 1)
        width = Int(info.width)
        height = Int(info.height)
        orientation = Orientation(exifValue: Int(info.orientation))
        hasAlpha = info.has_alpha != 0
        isProgressive = info.progressive != 0
        isAnimated = info.animated != 0
        isLossless = info.lossless != 0
        bitDepth = info.bit_depth > 0 ? Int(info.bit_depth) : 8
        self.pixelLimit = pixelLimit
        components = Int(info.components)
        switch Int(info.color_model) {
        case Int(THUMBD_GRAY): colorModel = .gray
        case Int(THUMBD_RGB): colorModel = .rgb
        case Int(THUMBD_YCC): colorModel = .ycc
        case Int(THUMBD_CMYK): colorModel = .cmyk
        case Int(THUMBD_YCCK): colorModel = .ycck
        default: colorModel = .other
        }
    }

    /// Width as a person sees the image (after EXIF orientation).
    public var displayedWidth: Int { orientation.swapsAxes ? height : width }
    /// Height as a person sees the image (after EXIF orientation).
    public var displayedHeight: Int { orientation.swapsAxes ? width : height }

    public static func == (a: ImageHeader, b: ImageHeader) -> Bool {
        a.format == b.format && a.width == b.width && a.height == b.height && a.orientation == b.orientation
            && a.hasAlpha == b.hasAlpha && a.isProgressive == b.isProgressive && a.colorModel == b.colorModel
            && a.components == b.components && a.isAnimated == b.isAnimated
            && a.bitDepth == b.bitDepth && a.isLossless == b.isLossless && a.animation == b.animation
            && a.frames == b.frames
    }
}
