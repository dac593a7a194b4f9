import Testing
import ThumbCodec

@Test func linkedLibrariesReportVersions() {
    #expect(codecLibraryVersions.contains("libjpeg") && codecLibraryVersions.contains("libpng"))
}
