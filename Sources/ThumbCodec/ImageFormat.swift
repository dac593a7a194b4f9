/// The source formats thumbd decodes, told apart by their first bytes only
/// (never by a file name or a Content-Type).
public enum ImageFormat: String, Sendable, CaseIterable, Codable {
    case jpeg
    case png
    case webp
    case gif
    case avif
    /// HEIF with HEVC images (`heic`, `heix`, …) or a generic `mif1`/`msf1` file.
    case heic
    /// JPEG XL: a bare codestream (`FF 0A`) or the ISOBMFF container, whose
    /// first box is `JXL ` (12 bytes: `00 00 00 0C 4A 58 4C 20 0D 0A 87 0A`).
    /// Sniffed always; decoded only when the caller allows it
    /// (`ImageDecoder.probe(_:maxPixels:allowJPEGXL:)`, SPEC §3.2).
    case jxl

    /// The format whose signature `bytes` starts with, or nil.
    public static func sniff(_ bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        if bytes.count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF { return .jpeg }
        if starts(bytes, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if bytes.count >= 12, starts(bytes, Array("RIFF".utf8)), starts(bytes, Array("WEBP".utf8), at: 8) { return .webp }
        if starts(bytes, Array("GIF87a".utf8)) || starts(bytes, Array("GIF89a".utf8)) { return .gif }
        if starts(bytes, [0xFF, 0x0A]) || starts(bytes, jxlContainerSignature) { return .jxl }
        return isoBMFF(bytes)
    }

    public static func sniff(_ bytes: [UInt8]) -> ImageFormat? {
        bytes.withUnsafeBytes { sniff($0) }
    }

    private static func starts(_ bytes: UnsafeRawBufferPointer, _ prefix: [UInt8], at offset: Int = 0) -> Bool {
        bytes.count >= offset + prefix.count && prefix.indices.allSatisfy { bytes[offset + $0] == prefix[$0] }
    }

    private static let jxlContainerSignature: [UInt8] = [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]

    private static let avifBrands: Set<String> = ["avif", "avis"]
    private static let heicBrands: Set<String> = ["heic", "heix", "hevc", "heim", "heis", "hevm", "hevs"]
    private static let genericBrands: Set<String> = ["mif1", "msf1"]

    /// An ISO-BMFF file that opens with an `ftyp` box: AVIF when the major
    /// brand, or else any compatible brand, is an AV1 one; HEIC likewise for
    /// HEVC brands; a file with only the generic HEIF brands is HEIC (libheif
    /// decides what it holds). Other ISO-BMFF files (MP4, CR3, …) are nil.
    private static func isoBMFF(_ bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        guard bytes.count >= 16, starts(bytes, Array("ftyp".utf8), at: 4) else { return nil }
        let declared = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        guard declared >= 16 else { return nil }
        let end = min(declared, bytes.count, 4096)
        func brand(at offset: Int) -> String { String(decoding: (0..<4).map { bytes[offset + $0] }, as: UTF8.self) }
        let major = brand(at: 8)
        let compatible = stride(from: 16, through: end - 4, by: 4).map(brand(at:))
        if avifBrands.contains(major) { return .avif }
        if heicBrands.contains(major) { return .heic }
        if compatible.contains(where: avifBrands.contains) { return .avif }
        if compatible.contains(where: heicBrands.contains) { return .heic }
        if genericBrands.contains(major) || compatible.contains(where: genericBrands.contains) { return .heic }
        return nil
    }
}
