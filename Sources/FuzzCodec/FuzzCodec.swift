import FuzzDriver
import Foundation
import ThumbCodec
import ThumbHashFormat
import ThumbImaging

// libFuzzer target over sniff + probe + decode of every source format (+ scale
// and encode to every output format of what decodes). Built by Tests/Fuzz/fuzz-codec.sh with -sanitize=fuzzer,address
// and -DFUZZING; in a normal build it replays the files named on the command
// line, so a crash found by the fuzzer can be reproduced with a plain binary.

func fuzzOne(_ data: [UInt8]) {
    _ = ImageFormat.sniff(data)
    // JPEG XL too (the service reads it only when `limits.jpegXLSources` allows).
    guard let header = try? ImageDecoder.probe(data, maxPixels: 4_000_000, allowJPEGXL: true) else { return }
    precondition(header.frames >= 1 && (header.format != .jxl || header.frames == FrameCount.of(data, format: .jxl)))
    var sink = BitmapSink()
    if (try? ImageDecoder.decode(data, header: header, minimumDisplayedSize: nil, into: &sink)) != nil,
       let bitmap = sink.bitmap() {
        precondition(bitmap.width == header.width && bitmap.height == header.height, "decoded size differs from header")
        let small = ThumbnailRenderer.render(bitmap, orientation: header.orientation,
                                             geometry: ThumbnailGeometry(scaledWidth: min(32, header.displayedWidth),
                                                                         scaledHeight: min(32, header.displayedHeight),
                                                                         width: min(32, header.displayedWidth),
                                                                         height: min(32, header.displayedHeight)))
        // Composition on what decoded (API.md § Composition): the focus, a
        // blur and a sharpen with a sigma the input picks, contain's canvas.
        let focus = Attention.focus(of: small)
        precondition((0...1000).contains(focus.x) && (0...1000).contains(focus.y), "focus outside the image")
        // /info's placeholder facts: the ThumbHash decodes back to a picture of the copy's shape, alpha and all.
        let hash = ThumbHash.encode(small)
        precondition(ThumbHash.decode(hash) != nil && (hash[2] & 0x80 != 0) == !small.isOpaque, "ThumbHash does not decode")
        precondition(AverageColor.hex(AverageColor.of(small)).utf8.count == 7)
        precondition(FrameCount.of(data, format: header.format) >= 1)
        var floats = small.pixels.withUnsafeBufferPointer { p in
            (0..<(small.width * small.height)).map { i in
                let a = Float(p[i * 4 + 3]) / 255
                return SIMD4<Float>(Float(p[i * 4]) / 255 * a, Float(p[i * 4 + 1]) / 255 * a, Float(p[i * 4 + 2]) / 255 * a, a)
            }
        }
        let sigma = 0.3 + Float(data.count % 4000) / 10
        GaussianBlur.apply(&floats, width: small.width, height: small.height, sigma: sigma)
        UnsharpMask.apply(&floats, width: small.width, height: small.height, sigma: min(sigma, 40))
        precondition(floats.allSatisfy { $0.w >= 0 && $0.w <= 1 && $0.x <= $0.w + 1e-6 }, "a filter left the range")
        let canvas = small.placed(onCanvasWidth: small.width + 3, height: small.height + 2, x: 1, y: 2,
                                  background: RGBAColor(r: data.first ?? 0, g: 1, b: 2, a: data.last ?? 255))
        precondition(canvas.width == small.width + 3 && canvas.height == small.height + 2)
        _ = try? JPEGEncoder.encode(small, quality: 75)
        _ = try? PNGEncoder.encode(small)
        _ = try? WebPEncoder.encode(small, quality: 75)
        // aom costs milliseconds even for 32 px: encode one input in eight to keep the fuzzer fast.
        if data.count % 8 == 0 { _ = try? AVIFEncoder.encode(small, quality: 75) }
        if data.count % 8 == 1 { _ = try? JXLEncoder.encode(small, quality: 75) }
    }
    // The scaled path (JPEG DCT scaling, WebP shrink on load) at the smallest scale.
    var scaled = BitmapSink()
    _ = try? ImageDecoder.decode(data, header: header, minimumDisplayedSize: (1, 1), into: &scaled)
    fuzzAnimation(data, header)
}

/// An animated GIF or WebP read frame by frame (SPEC §14): at most four frames,
/// each the canvas's size, scaled to at most 16 px and encoded as an animation.
func fuzzAnimation(_ data: [UInt8], _ header: ImageHeader) {
    guard let animation = header.animation else { return }
    let w = min(16, header.displayedWidth), h = min(16, header.displayedHeight)
    guard let encoder = try? AnimatedWebPEncoder(width: w, height: h, quality: 50, loopCount: animation.loopCount) else { return }
    let count = try? AnimationDecoder.decode(data, header: header, maxFrames: 4) { frame throws(CodecError) in
        precondition(frame.width == header.width && frame.height == header.height, "frame size differs from the canvas")
        var renderer = ThumbnailRenderer(geometry: ThumbnailGeometry(scaledWidth: w, scaledHeight: h, width: w, height: h),
                                         orientation: header.orientation)
        frame.feed(into: &renderer)
        try encoder.add(renderer.finish(), durationMilliseconds: frame.durationMilliseconds)
    }
    precondition((count ?? 0) <= min(4, animation.frames), "more frames than the header counts")
    if (count ?? 0) > 0 { _ = try? encoder.finish() }
}

#if FUZZING
@_cdecl("FuzzCodec_main")
func fuzzMain(_ argc: CInt, _ argv: FuzzDriver.Argv) -> CInt { FuzzDriver.run(argc, argv, fuzzOne) }
#else
@main
struct Replay {
    static func main() { FuzzDriver.replay(fuzzOne) }
}
#endif
