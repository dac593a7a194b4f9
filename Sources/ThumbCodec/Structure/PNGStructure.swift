import CThumbCodec

/// The PNG structure walk (StructureWalk); its limits are named here and in
/// SourcesAndLimits.md § Structure limits.
///
/// The chunks before the image data — what `png_read_info` reads, in one
/// uninterruptible call, in every probe and every decode: each chunk's
/// length inside the data, the ancillary ones counted, and what the
/// compressed ones (`zTXt`, compressed `iTXt`, `iCCP`) inflate to, summed.
/// The walk stops at the first IDAT: from there libpng reads image data,
/// row by row under the deadline, and nothing after the last row (API.md
/// § Output "Strictness": chunks after it cost nothing and cannot fail the
/// image). CRCs are libpng's to check (it does, on every chunk it reads).
enum PNGStructure {
    /// Ancillary chunks before the image data. libpng handles each in its one
    /// `png_read_info` call; real files have a handful (a few dozen text
    /// chunks at most).
    static let maxAncillaryChunks = 4096

    /// Bytes the compressed ancillary chunks before the image data inflate
    /// to, all together (an iCCP as far as libpng inflates it, below). A
    /// zTXt of 4 KB inflates to 4 MB; 256 of them (1 MB) made libpng hold
    /// 1 GiB of text in every probe and decode of a 1×1 image. libpng now
    /// skips text (png.c), but no real image has this much: real text is
    /// kilobytes, a profile at most 4 MiB (a larger one is ignored, API.md §
    /// Output "Colour"). Counting inflates into a small scratch buffer and
    /// stops at the limit, so the walk's own work is bounded by it too
    /// (milliseconds).
    static let maxInflatedAncillaryBytes = 16 << 20

    /// The most libpng inflates of one iCCP: its chunk cap, THUMBD_PNG_CHUNK_MAX
    /// in thumbd_codec.h (a macro Swift cannot import).
    static let iccpInflateCap = 4 << 20

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func walk(_ bytes: UnsafeRawBufferPointer) throws(CodecError) {
        var reader = StructureReader(bytes)
        for expected in signature {
            guard reader.u8() == expected else { return }   // not a PNG: libpng refuses it
        }
        var ancillary = 0
        var inflated = 0
        // A chunk is length, type, data and CRC; with fewer than 12 bytes left
        // the data ends and libpng says so ("truncated").
        while reader.remaining >= 12, let length = reader.u32be(), let type = reader.u32be() {
            if type == tag("IDAT") || type == tag("IEND") { return }
            // Before libpng allocates a buffer for the length a chunk claims.
            guard Int(length) <= reader.remaining - 4, var data = reader.sub(Int(length)) else {
                throw .corrupt("PNG chunk extends past the end of the data (truncated)")
            }
            reader.skip(4)   // CRC
            guard type >> 24 & 0x20 != 0 else { continue }   // critical (IHDR, PLTE): libpng checks them
            ancillary += 1
            if ancillary > maxAncillaryChunks {
                throw .tooComplex("PNG has more than \(maxAncillaryChunks) ancillary chunks before its image data")
            }
            guard let stream = compressedStream(type: type, data: &data) else { continue }
            // libpng inflates a profile only up to the length its header
            // declares, and ignores one declaring more than its chunk cap
            // (API.md § Output "Colour": a profile over 4 MiB is ignored):
            // an iCCP counts what libpng can inflate of it.
            let cap = type == tag("iCCP") ? iccpInflateCap : .max
            let budget = maxInflatedAncillaryBytes - inflated
            inflated += min(cap, thumbd_inflated_length(stream.baseAddress, stream.count, min(cap, budget)))
            if inflated > maxInflatedAncillaryBytes {
                throw .tooComplex("PNG ancillary chunks inflate to more than \(maxInflatedAncillaryBytes >> 20) MiB")
            }
        }
    }

    /// The zlib stream of a compressed ancillary chunk, or nil when the chunk
    /// is not compressed or too malformed to hold one (libpng then only warns
    /// and drops the chunk, inflating nothing).
    private static func compressedStream(type: UInt32, data: inout StructureReader) -> UnsafeRawBufferPointer? {
        switch type {
        case tag("zTXt"), tag("iCCP"):
            // keyword NUL, compression method, stream
            guard skipString(&data), data.skip(1) else { return nil }
        case tag("iTXt"):
            // keyword NUL, compressed flag, method, language NUL, translated keyword NUL, text
            guard skipString(&data), let compressed = data.u8(), compressed != 0, data.skip(1),
                  skipString(&data), skipString(&data) else { return nil }
        default:
            return nil
        }
        return UnsafeRawBufferPointer(rebasing: data.bytes[data.offset...])
    }

    /// Moves past the next NUL; false when there is none.
    private static func skipString(_ reader: inout StructureReader) -> Bool {
        guard reader.seek(to: 0) else { return false }
        return reader.skip(1)
    }

    private static func tag(_ name: StaticString) -> UInt32 {
        name.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
    }
}
