import CJXL

/// JPEG XL files libjxl's encoder writes for shapes cjxl 0.7 cannot make
/// from a file (Debian's cjxl reads no GIF or APNG): animations.
enum JXLWriter {
    /// A lossy animation of `colors.count` solid width×height frames of
    /// 100 ms each, in order; a bare codestream.
    static func animation(width: Int, height: Int, colors: [(UInt8, UInt8, UInt8)]) -> [UInt8] {
        let enc = JxlEncoderCreate(nil)!
        defer { JxlEncoderDestroy(enc) }
        var basic = JxlBasicInfo()
        JxlEncoderInitBasicInfo(&basic)
        basic.xsize = UInt32(width)
        basic.ysize = UInt32(height)
        basic.bits_per_sample = 8
        basic.num_color_channels = 3
        basic.uses_original_profile = JXL_FALSE
        basic.have_animation = JXL_TRUE
        basic.animation.tps_numerator = 1000
        basic.animation.tps_denominator = 1
        precondition(JxlEncoderSetBasicInfo(enc, &basic) == JXL_ENC_SUCCESS)
        var srgb = JxlColorEncoding()
        JxlColorEncodingSetToSRGB(&srgb, JXL_FALSE)
        precondition(JxlEncoderSetColorEncoding(enc, &srgb) == JXL_ENC_SUCCESS)
        let settings = JxlEncoderFrameSettingsCreate(enc, nil)
        var format = JxlPixelFormat(num_channels: 3, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
        for (r, g, b) in colors {
            var header = JxlFrameHeader()
            JxlEncoderInitFrameHeader(&header)
            header.duration = 100
            precondition(JxlEncoderSetFrameHeader(settings, &header) == JXL_ENC_SUCCESS)
            let pixels = [UInt8]((0..<(width * height)).flatMap { _ in [r, g, b] })
            precondition(JxlEncoderAddImageFrame(settings, &format, pixels, pixels.count) == JXL_ENC_SUCCESS)
        }
        JxlEncoderCloseInput(enc)
        var out = [UInt8](repeating: 0, count: 1 << 16)
        var used = 0
        while true {
            let status = out.withUnsafeMutableBufferPointer { buffer -> JxlEncoderStatus in
                var next: UnsafeMutablePointer<UInt8>? = buffer.baseAddress! + used
                var available = buffer.count - used
                let status = JxlEncoderProcessOutput(enc, &next, &available)
                used = next! - buffer.baseAddress!
                return status
            }
            if status == JXL_ENC_SUCCESS { break }
            precondition(status == JXL_ENC_NEED_MORE_OUTPUT)
            out += [UInt8](repeating: 0, count: out.count)
        }
        return Array(out[..<used])
    }
}
