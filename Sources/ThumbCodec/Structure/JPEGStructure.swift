/// The JPEG structure walk (StructureWalk); its limits are named here and in
/// SourcesAndLimits.md § Structure limits.
///
/// From SOI to the first EOI: every marker segment and its length, and the
/// entropy-coded data between them (searched for the next marker as libjpeg
/// does: `FF 00` is a stuffed byte, `FF D0`…`FF D7` restart markers, repeated
/// `FF`s fill). The walk goes on past the first SOS because libjpeg does: a
/// progressive (or multi-scan) file's scans, and the segments between them,
/// are all read inside `jpeg_start_decompress`, and an APPn segment there is
/// saved like one in the header.
///
/// Scans (SOS) are not counted: more than 100 of them is the scan rule's
/// (Configuration.md `maxRenderSeconds`), checked by libjpeg's progress
/// monitor while the scans are read, and answered `corrupt_image`.
enum JPEGStructure {
    /// APP1 segments, and APP2 segments, each kind counted on its own. thumbd
    /// has libjpeg save APP1 (Exif, in the probe) and APP2 (ICC profiles, in
    /// the decode) with `jpeg_save_markers`, and libjpeg-turbo's
    /// `save_marker` appends each saved segment by walking the whole list:
    /// N segments cost N²/2 steps in one uninterruptible call (100 000 empty
    /// ones: ~10 s). Real files carry one to a few APP1 (Exif, XMP, extended
    /// XMP in 64 KB parts) and at most 255 ICC_PROFILE APP2 parts; a small
    /// image padded with 48 MB of 64 KB APP2 segments (Tests/Benchmarks
    /// attacks.sh "app2-padded", ~730 of them) stays well inside, and so does
    /// any file of full-size segments under 256 MB. At the limit the list
    /// walk is ~8 million steps (milliseconds).
    static let maxSavedSegmentsPerKind = 4096

    /// Marker segments of every kind but SOS, up to EOI. libjpeg handles each
    /// of the others in constant time, but all of a header's in one
    /// uninterruptible `jpeg_read_header`, and all of those between scans in
    /// one `jpeg_start_decompress`; real files have tens (a progressive one a
    /// DHT per scan), the padded shape above ~735.
    static let maxSegments = 65_536

    static func walk(_ bytes: UnsafeRawBufferPointer) throws(CodecError) {
        var reader = StructureReader(bytes)
        guard reader.u8() == 0xFF, reader.u8() == 0xD8 else { return }   // not SOI: libjpeg refuses it
        var segments = 0, app1 = 0, app2 = 0
        var inScans = false
        while let marker = nextMarker(&reader) {
            switch marker {
            case 0xD9:
                return   // EOI: libjpeg reads nothing after it
            case 0xD0...0xD7, 0x01, 0xD8:
                continue   // RSTn, TEM, a stray SOI: no length (libjpeg fails a second SOI itself)
            default:
                break
            }
            // Past the first SOS a broken segment is libjpeg's to judge: the
            // data may already hold the whole image (a missing trailer is
            // tolerated, API.md § Output "Strictness").
            guard let length = reader.u16be() else {
                if inScans { return }
                throw .corrupt("JPEG data ends inside a marker (truncated)")
            }
            guard length >= 2 else {
                if inScans { return }
                throw .corrupt("JPEG marker segment with length \(length)")
            }
            guard reader.skip(Int(length) - 2) else {
                if inScans { return }
                throw .corrupt("JPEG marker segment extends past the end of the data (truncated)")
            }
            if marker == 0xDA {
                inScans = true
                continue
            }
            segments += 1
            if marker == 0xE1 { app1 += 1 }
            if marker == 0xE2 { app2 += 1 }
            if segments > maxSegments {
                throw .tooComplex("JPEG has more than \(maxSegments) marker segments")
            }
            if app1 > maxSavedSegmentsPerKind || app2 > maxSavedSegmentsPerKind {
                throw .tooComplex("JPEG has more than \(maxSavedSegmentsPerKind) APP\(app1 > app2 ? 1 : 2) segments")
            }
        }
    }

    /// The next marker code as libjpeg's `next_marker` finds it: bytes up to
    /// an `FF` are skipped (entropy-coded data, or garbage libjpeg only warns
    /// about), fill `FF`s are skipped, and `FF 00` is a stuffed data byte.
    /// nil at the end of the data.
    private static func nextMarker(_ reader: inout StructureReader) -> UInt8? {
        while reader.seek(to: 0xFF) {
            var code: UInt8 = 0xFF
            while code == 0xFF {
                guard let next = reader.u8() else { return nil }
                code = next
            }
            if code != 0x00 { return code }
        }
        return nil
    }
}
