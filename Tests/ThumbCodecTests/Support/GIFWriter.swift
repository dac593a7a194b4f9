/// Writes GIFs for the animation tests: any screen, frames at offsets,
/// graphic control and NETSCAPE extensions, with real LZW data that giflib
/// decodes — so that the cases Pillow composites otherwise than browsers,
/// and hostile shapes (thousands of frames, huge claimed screens, frames of
/// tiny LZW codes), can be built exactly.
struct GIFWriter {
    /// A frame's pixels: palette indices row by row, or one index repeated
    /// (coded as LZW's longest strings: a few bytes per million pixels).
    enum Pixels {
        case indices([UInt8])
        case run(UInt8, count: Int)
    }

    private(set) var bytes: [UInt8] = Array("GIF89a".utf8)

    /// The header, the logical screen and a global table of `palette` (padded to 2^n entries).
    init(width: Int, height: Int, palette: [(UInt8, UInt8, UInt8)], loopCount: Int? = nil) {
        let table = Self.table(palette)
        bytes += Self.u16(width) + Self.u16(height) + [0x80 | table.bits, 0, 0] + table.bytes
        if let loopCount {
            bytes += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1] + Self.u16(loopCount) + [0]
        }
    }

    /// One frame: a graphic control extension (delay in centiseconds,
    /// disposal 0…7, a transparent index) and the image.
    mutating func frame(x: Int = 0, y: Int = 0, width: Int, height: Int, pixels: Pixels, delay: Int = 10,
                        disposal: Int = 1, transparent: UInt8? = nil, localPalette: [(UInt8, UInt8, UInt8)]? = nil) {
        let flags = UInt8(disposal << 2) | (transparent == nil ? 0 : 1)
        bytes += [0x21, 0xF9, 4, flags] + Self.u16(delay) + [transparent ?? 0, 0]
        bytes += [0x2C] + Self.u16(x) + Self.u16(y) + Self.u16(width) + Self.u16(height)
        if let localPalette {
            let table = Self.table(localPalette)
            bytes += [0x80 | table.bits] + table.bytes
        } else {
            bytes += [0]
        }
        bytes += [8] + Self.subBlocks(LZW.encode(pixels))
    }

    /// Bytes as they are (a damaged block, a comment).
    mutating func raw(_ more: [UInt8]) { bytes += more }

    /// The file with its trailer.
    var finished: [UInt8] { bytes + [0x3B] }

    private static func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }

    private static func table(_ palette: [(UInt8, UInt8, UInt8)]) -> (bits: UInt8, bytes: [UInt8]) {
        var size = 2, bits: UInt8 = 0
        while size < palette.count { size *= 2; bits += 1 }
        var out: [UInt8] = []
        for i in 0..<size {
            let c = i < palette.count ? palette[i] : (0, 0, 0)
            out += [c.0, c.1, c.2]
        }
        return (bits, out)
    }

    private static func subBlocks(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < data.count {
            let n = min(255, data.count - i)
            out += [UInt8(n)] + data[i..<(i + n)]
            i += n
        }
        return out + [0]
    }
}

/// GIF's LZW with a minimum code size of 8, as giflib's encoder writes it
/// (EGifCompressLine): a clear code first; a code's width grows after the
/// code written when the next free code reaches 2^width; a clear code once
/// the table holds 4095 entries.
enum LZW {
    static func encode(_ pixels: GIFWriter.Pixels) -> [UInt8] {
        var out = BitPacker()
        switch pixels {
        case .indices(let indices): general(indices, &out)
        case .run(let index, let count): run(index, count: count, &out)
        }
        out.write(eoi)
        return out.finished
    }

    static let clear = 256, eoi = 257, first = 258

    private static func general(_ indices: [UInt8], _ out: inout BitPacker) {
        var table: [Int: Int] = [:]
        out.write(clear)
        guard var current = indices.first.map(Int.init) else { return }
        for p in indices.dropFirst() {
            let key = current << 8 | Int(p)
            if let code = table[key] { current = code; continue }
            out.write(current)
            current = Int(p)
            if out.next >= 4095 { out.write(clear); out.reset(); table.removeAll() } else { table[key] = out.next; out.next += 1 }
        }
        out.write(current)
    }

    /// `count` pixels of one index without a table: the strings of a run are
    /// the index repeated, entry 256 + n being n of them.
    private static func run(_ index: UInt8, count: Int, _ out: inout BitPacker) {
        out.write(clear)
        var remaining = count, longest = 1
        while remaining > 0 {
            let length = min(longest, remaining)
            remaining -= length
            out.write(length == 1 ? Int(index) : 256 + length)
            guard remaining > 0 else { break }
            if out.next >= 4095 { out.write(clear); out.reset(); longest = 1 } else { out.next += 1; longest = length + 1 }
        }
    }
}

/// Codes packed least significant bit first, with the code width of `next`.
struct BitPacker {
    private var bytes: [UInt8] = []
    private var buffer = 0, count = 0
    private var width = 9
    var next = LZW.first

    mutating func write(_ code: Int) {
        buffer |= code << count
        count += width
        while count >= 8 {
            bytes.append(UInt8(buffer & 0xFF))
            buffer >>= 8
            count -= 8
        }
        if next >= 1 << width && width < 12 { width += 1 }
    }

    mutating func reset() {
        width = 9
        next = LZW.first
    }

    var finished: [UInt8] { count > 0 ? bytes + [UInt8(buffer & 0xFF)] : bytes }
}
