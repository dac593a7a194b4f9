/// thumbd's `q` (1…100) as one perceptual scale for every lossy format
/// (SPEC §17), anchored on JPEG: a JPEG's `q` is libjpeg's quality. WebP's,
/// AVIF's and JPEG XL's setting for each `q` comes from the tables `ThumbBench
/// --calibrate` writes (QualityScale+Tables.swift; Tests/Benchmarks/calibrate-quality.sh):
/// for every `q`, the setting whose mean SSIMULACRA2 score over the quality
/// corpus at 512 px is closest to JPEG's at that `q` (Quality.md § The scale).
/// Every other encoder setting is fixed here, chosen by bytes at equal score
/// (`ThumbBench --levers`; Quality.md § Encoder settings).
public enum QualityScale {
    /// Bumped whenever a table or a fixed setting below changes what a `q`
    /// gives: q=auto's stored results name the version they were searched with.
    public static let tableVersion = 3

    /// The settings of a JPEG at `q`: libjpeg's quality `q` on N. Robidoux's
    /// tables, progressive (≈ 5 % fewer bytes at equal score than Annex K's
    /// baseline), 4:2:0.
    public static func jpeg(_ q: Int) -> JPEGEncoder.Settings {
        JPEGEncoder.Settings(quality: clamp(q), progressive: true, fullChroma: false, table: .robidoux)
    }

    public static func webp(_ q: Int) -> WebPEncoder.Settings {
        webpSettings(quality: Float(webpQualities[clamp(q) - 1]))
    }

    public static func avif(_ q: Int) -> AVIFEncoder.Settings {
        avifSettings(quantizer: Int(avifQuantizers[clamp(q) - 1]))
    }

    /// `avif(q)` for a bitmap of `pixels`: libavif 0.11 cannot stop an encode
    /// once it runs (no deadline hook), so the speed rises with the size to
    /// keep one encode near half a second of CPU at most (speed 5 ≈ 1.4 µs a
    /// pixel, 6 ≈ 0.25, 8 ≈ 0.12, 9 ≈ 0.03): speed 5 up to 300 000 pixels
    /// (every 512-px thumbnail, where the table is calibrated), 6 up to 1.2 MP,
    /// 8 up to 4 MP, 9 above (a 4096² answer ≈ 0.55 s).
    public static func avif(_ q: Int, pixels: Int) -> AVIFEncoder.Settings {
        var settings = avif(q)
        settings.speed = pixels <= 300_000 ? settings.speed : pixels <= 1_200_000 ? 6 : pixels <= 4_000_000 ? 8 : 9
        return settings
    }

    public static func jxl(_ q: Int) -> JXLEncoder.Settings {
        jxlSettings(distance: jxlDistances[clamp(q) - 1])
    }

    /// WebP's fixed settings around the calibrated quality: method 4 and
    /// sharp YUV (≈ 3.6 % fewer bytes at equal score than method 4 without
    /// it, ≈ 16 ms per 512-px photo against 11). Methods 5 and 6 save 1 and
    /// 3 % more, but a default 256-px miss then costs 1.18× and 1.78× what it
    /// did before the quality scale, past the 1.15× bound that sharp YUV at
    /// method 4 keeps (1.11×; Quality.md § Encoder settings).
    public static func webpSettings(quality: Float) -> WebPEncoder.Settings {
        WebPEncoder.Settings(quality: quality, method: 4, sharpYUV: true)
    }

    /// AVIF's fixed settings around the calibrated quantizer: aom at speed 5
    /// (≈ 28 % fewer bytes at equal score than speed 9, 6 % fewer than speed 6,
    /// which brings it to libvips 8.14's bytes at equal score; ≈ 290 ms per
    /// 512-px photo at q 80, 0.98× libvips 8.14's heifsave at its default
    /// effort, the bound — speed 6 took 51 ms for 1.07× libvips'
    /// bytes; Results.md § Bytes at equal quality), 4:2:0, and alpha at the colour's
    /// quantizer (a third of lossless alpha's bytes at equal score on
    /// translucent images).
    public static func avifSettings(quantizer: Int) -> AVIFEncoder.Settings {
        AVIFEncoder.Settings(quantizer: quantizer, alphaQuantizer: quantizer, speed: 5, fullChroma: false, codec: .aom)
    }

    /// JPEG XL's fixed settings around the calibrated distance.
    public static func jxlSettings(distance: Float) -> JXLEncoder.Settings {
        JXLEncoder.Settings(distance: distance, effort: JXLEncoder.defaultEffort)
    }

    static func clamp(_ q: Int) -> Int { min(100, max(1, q)) }
}
