// swift-tools-version:6.0
import PackageDescription

// Layers, bottom to top (arrows point one way):
//   CJPEG/CPNG/CCrypto (system libraries) → CThumbCodec (C shim, owns every setjmp)
//   ThumbClock (the wall-clock seam and Duration conversions; nothing else)
//   ThumbImaging (bitmaps, geometry, resampling; no I/O)
//   ThumbCodec (sniff, probe, decode, encode) → ThumbImaging, CThumbCodec
//   ThumbJSON (a strict JSON value, parser and serializer; no I/O)
//   ThumbHTTP (sockets, parser, connections; no images) → CThumbSys, ThumbJSON (error bodies), ThumbClock
//   ThumbFetch (downloads of originals and the source rules; no images) → CThumbCurl (libcurl shim)
//   ThumbService (config, disk store, memory cache, coalescing, render queue, pipeline, stats)
//     → ThumbCodec, ThumbImaging, ThumbFetch, ThumbJSON, ThumbHTTP (its config types only), ThumbClock
//   ThumbAPI (routes, handler, /stats and /metrics, signing, Daemon assembly) → ThumbService, ThumbHTTP
//   thumbd (CLI, signals, systemd, logging) → ThumbAPI
let package = Package(
    name: "thumbd",
    products: [
        .executable(name: "thumbd", targets: ["thumbd"]),
    ],
    targets: [
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg",
                       providers: [.apt(["libjpeg-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng",
                       providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebpdemux", providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(name: "CGIF", pkgConfig: "libgif", providers: [.apt(["libgif-dev"])]),
        .systemLibrary(name: "CHeif", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(name: "CAvif", pkgConfig: "libavif", providers: [.apt(["libavif-dev"])]),
        .systemLibrary(name: "CLCMS2", pkgConfig: "lcms2",
                       providers: [.apt(["liblcms2-dev"])]),
        .target(name: "CThumbCodec", dependencies: ["CJPEG", "CPNG", "CWebP", "CGIF", "CHeif", "CAvif", "CLCMS2"],
                cSettings: [.unsafeFlags(["-O2"])]),
        .target(name: "CThumbSys"),
        .target(name: "CThumbCurl", linkerSettings: [.linkedLibrary("curl")]),

        .target(name: "ThumbClock"),
        .target(name: "ThumbImaging",
                linkerSettings: [.linkedLibrary("m")]),
        .target(name: "ThumbCodec", dependencies: ["CThumbCodec", "ThumbImaging"]),
        .target(name: "ThumbHTTP", dependencies: ["CThumbSys", "ThumbJSON", "ThumbClock"]),

        .target(name: "ThumbJSON"),
        .target(name: "ThumbFetch", dependencies: ["CThumbCurl"]),
        .target(name: "ThumbService", dependencies: ["ThumbCodec", "ThumbImaging", "ThumbHTTP", "ThumbFetch",
                                                     "ThumbJSON", "CCrypto", "ThumbClock"]),
        .target(name: "ThumbAPI", dependencies: ["ThumbService", "ThumbHTTP", "ThumbFetch", "ThumbJSON", "ThumbClock"]),

        .executableTarget(name: "thumbd",
                          dependencies: ["ThumbAPI", "ThumbService", "ThumbCodec", "ThumbImaging", "ThumbHTTP",
                                         "ThumbJSON", "ThumbClock"]),

        .executableTarget(name: "ThumbBench", dependencies: ["ThumbService"]),
        .target(name: "FuzzDriver"),
        .executableTarget(name: "FuzzCodec", dependencies: ["FuzzDriver", "ThumbCodec", "ThumbImaging"]),
        .executableTarget(name: "FuzzHTTPParser", dependencies: ["FuzzDriver", "ThumbHTTP"]),
        .executableTarget(name: "FuzzJSON", dependencies: ["FuzzDriver", "ThumbJSON"]),
        .executableTarget(name: "FuzzConfig", dependencies: ["FuzzDriver", "ThumbService", "ThumbJSON"]),
        .target(name: "FuzzCurlShim", dependencies: ["CThumbCurl"]),
        .executableTarget(name: "FuzzOriginResponse", dependencies: ["FuzzDriver", "FuzzCurlShim", "ThumbFetch", "CThumbCurl"]),
        .executableTarget(name: "HTTPBench", dependencies: ["ThumbHTTP"]),

        // Helpers the test targets share (for now the manual clocks).
        .target(name: "ThumbTestSupport", dependencies: ["ThumbClock"], path: "Tests/ThumbTestSupport"),
        .testTarget(name: "ThumbImagingTests", dependencies: ["ThumbImaging"]),
        .testTarget(name: "ThumbCodecTests", dependencies: ["ThumbCodec", "ThumbImaging", "CThumbCodec", "CCrypto"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "ThumbHTTPTests", dependencies: ["ThumbHTTP", "ThumbClock", "ThumbTestSupport"]),
        .testTarget(name: "ThumbFetchTests", dependencies: ["ThumbFetch"]),
        .testTarget(name: "ThumbServiceTests", dependencies: ["ThumbService", "ThumbHTTP", "ThumbFetch", "ThumbJSON",
                                                              "ThumbAPI", "ThumbClock", "ThumbTestSupport"]),
        .testTarget(name: "ThumbdTests", dependencies: ["thumbd", "ThumbTestSupport"]),
    ]
)
