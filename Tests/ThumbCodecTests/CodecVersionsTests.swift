import Testing
import ThumbCodec

@Test func linkedLibrariesReportVersions() {
    for name in ["libjpeg", "libpng", "libwebp", "giflib", "libheif", "libavif", "aom", "libjxl 0.", "lcms2 2."] {
        #expect(codecLibraryVersions.contains(name), "\(name) in \(codecLibraryVersions)")
    }
}
