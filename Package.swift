// swift-tools-version:6.0
import PackageDescription

// Layers, bottom to top (arrows point one way; Architecture.md has the same picture):
//   CJPEG/CPNG/CSPNG/CWebP/CGIF/CHeif/CAvif/CJXL/CLCMS2/CCrypto (system libraries) → CThumbCodec (C shim, owns every setjmp)
//   ThumbHashFormat (the ThumbHash placeholder format; no dependencies, shared with ThumbClient)
//   ThumbImaging (bitmaps, geometry, resampling, SSIMULACRA2; no I/O) → ThumbHashFormat
//   ThumbCodec (sniff, probe, decode, encode) → ThumbImaging, CThumbCodec
//   ThumbJSON (a strict JSON value, parser and serializer; no I/O)
//   ThumbClock (the injected clock, the wall clock, Deadline, Duration conversions; nothing else)
//   ThumbRender (one job on an original's bytes: pipeline, plan, variants, facts, RenderEngine,
//     the in-process engine, RenderError) → ThumbCodec, ThumbImaging, ThumbHashFormat, ThumbClock
//   ThumbHTTP (sockets, parser, connections; no images, no JSON) → CThumbSys, ThumbClock
//   ThumbFetch (downloads of originals and the source rules; no images) → CThumbCurl (libcurl shim)
//   ThumbService (its configuration, disk store, shared store, memory cache, coalescing, render
//     queue, stats; knows no HTTP, writes no JSON answer) → ThumbRender, ThumbFetch, ThumbJSON, ThumbClock
//   ThumbSandbox (the worker processes every probe, decode and encode runs in: channel, spawn,
//     shared memory, memory cap, seccomp; the worker's own loop) → ThumbRender, CThumbSandbox
//   ThumbAPI (routes, handler, error answers, /info's JSON, /stats and /metrics, signing, the
//     config file, Daemon assembly) → ThumbService, ThumbSandbox, ThumbHTTP
//   thumbd (CLI, signals, systemd, logging) → ThumbAPI; `thumbd thumbnail` → ThumbRender alone
let package = Package(
    name: "thumbd",
    // The Apple minimums ThumbClient's async URLSession calls need (the server is Linux-only).
    platforms: [.macOS(.v12), .iOS(.v15), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .executable(name: "thumbd", targets: ["thumbd"]),
        .library(name: "ThumbClient", targets: ["ThumbClient"]),
    ],
    targets: [
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg",
                       providers: [.apt(["libjpeg-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng",
                       providers: [.apt(["libpng-dev"])]),
        // libspng decodes PNG image data; libpng reads the chunks before it and writes PNGs (png.c says why).
        .systemLibrary(name: "CSPNG", pkgConfig: "spng", providers: [.apt(["libspng-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebpdemux", providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(name: "CGIF", pkgConfig: "libgif", providers: [.apt(["libgif-dev"])]),
        .systemLibrary(name: "CHeif", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(name: "CAvif", pkgConfig: "libavif", providers: [.apt(["libavif-dev"])]),
        // libjxl 0.7 alone: no libjxl_threads (one thread per job; no parallel runner is set).
        .systemLibrary(name: "CJXL", pkgConfig: "libjxl", providers: [.apt(["libjxl-dev"])]),
        .systemLibrary(name: "CLCMS2", pkgConfig: "lcms2",
                       providers: [.apt(["liblcms2-dev"])]),
        // zlib (libpng's own dependency, so always present) for the PNG structure walk's inflate count;
        // libwebpmux (libwebp-dev ships it beside libwebpdemux, whose pkg-config CWebP names) for the
        // animated WebP encoder.
        .target(name: "CThumbCodec", dependencies: ["CJPEG", "CPNG", "CSPNG", "CWebP", "CGIF", "CHeif", "CAvif", "CJXL", "CLCMS2"],
                cSettings: [.unsafeFlags(["-O2"])], linkerSettings: [.linkedLibrary("z"), .linkedLibrary("webpmux")]),
        .target(name: "CThumbSys"),
        .target(name: "CThumbCurl", linkerSettings: [.linkedLibrary("curl")]),
        // Worker processes' system layer: channel, spawn, memfd, memory cap, seccomp.
        .target(name: "CThumbSandbox"),

        // Optimized in debug builds too: its per-pixel SIMD loops run ~10× slower
        // unoptimized, and the test suite renders thousands of images.
        // The ThumbHash format alone, no dependencies: the server encodes, and ThumbClient decodes with it.
        .target(name: "ThumbHashFormat"),
        .target(name: "ThumbImaging", dependencies: ["ThumbHashFormat"], swiftSettings: [.unsafeFlags(["-O"])],
                linkerSettings: [.linkedLibrary("m")]),
        .target(name: "ThumbCodec", dependencies: ["CThumbCodec", "ThumbImaging"]),
        .target(name: "ThumbClock"),
        .target(name: "ThumbHTTP", dependencies: ["CThumbSys", "ThumbClock"]),

        .target(name: "ThumbJSON"),
        .target(name: "ThumbRender", dependencies: ["ThumbCodec", "ThumbImaging", "ThumbHashFormat", "ThumbClock", "CThumbSys"]),
        .target(name: "ThumbSandbox", dependencies: ["CThumbSandbox", "ThumbRender", "ThumbCodec", "ThumbImaging", "ThumbClock"]),
        .target(name: "ThumbFetch", dependencies: ["CThumbCurl"]),
        .target(name: "ThumbService", dependencies: ["ThumbRender", "ThumbCodec", "ThumbImaging", "ThumbHashFormat", "ThumbFetch", "ThumbJSON", "CCrypto",
                                                     "ThumbClock", "CThumbSys"]),
        .target(name: "ThumbAPI", dependencies: ["ThumbService", "ThumbRender", "ThumbSandbox", "ThumbHTTP", "ThumbFetch", "ThumbJSON", "ThumbImaging",
                                                 "ThumbClock"]),

        // The client library: none of the server's modules; libcrypto for HMAC on Linux only
        // (CryptoKit elsewhere).
        .target(name: "ThumbClient", dependencies: ["ThumbHashFormat",
                                                    .target(name: "CCrypto", condition: .when(platforms: [.linux]))]),

        // A list page's requests, the way an app makes them: `swift run ThumbClientExample BASE SOURCE...`.
        .executableTarget(name: "ThumbClientExample", dependencies: ["ThumbClient"]),
        // The first screen of a list, timed against a daemon (Tests/Benchmarks/first-screen.sh).
        .executableTarget(name: "FirstScreenBench", dependencies: ["ThumbClient"]),

        .executableTarget(name: "thumbd",
                          dependencies: ["ThumbAPI", "ThumbService", "ThumbRender", "ThumbSandbox", "ThumbCodec", "ThumbImaging", "ThumbHTTP",
                                         "ThumbJSON", "ThumbClock"]),

        .executableTarget(name: "ThumbBench", dependencies: ["ThumbRender", "ThumbImaging", "ThumbCodec"]),
        .target(name: "FuzzDriver"),
        .executableTarget(name: "FuzzCodec", dependencies: ["FuzzDriver", "ThumbCodec", "ThumbImaging", "ThumbHashFormat"]),
        .executableTarget(name: "FuzzStructure", dependencies: ["FuzzDriver", "ThumbCodec"]),
        .executableTarget(name: "FuzzHTTPParser", dependencies: ["FuzzDriver", "ThumbHTTP"]),
        .executableTarget(name: "FuzzJSON", dependencies: ["FuzzDriver", "ThumbJSON"]),
        .executableTarget(name: "FuzzConfig", dependencies: ["FuzzDriver", "ThumbAPI", "ThumbJSON"]),
        .target(name: "FuzzCurlShim", dependencies: ["CThumbCurl"]),
        .executableTarget(name: "FuzzOriginResponse", dependencies: ["FuzzDriver", "FuzzCurlShim", "ThumbFetch", "CThumbCurl"]),
        .executableTarget(name: "HTTPBench", dependencies: ["ThumbHTTP"]),

        // Shared by the test targets: loopback origins, servers and clients,
        // `eventually`, stop helpers. Public API only (no @testable), so release builds build it.
        .target(name: "ThumbTestSupport", dependencies: ["ThumbHTTP", "ThumbClock", "ThumbImaging", "ThumbCodec", "ThumbRender"],
                path: "Tests/ThumbTestSupport"),

        // ThumbCodec decodes the SSIMULACRA2 fixtures and encodes the JPEG quality ladder.
        .testTarget(name: "ThumbImagingTests", dependencies: ["ThumbImaging", "ThumbHashFormat", "ThumbCodec"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "ThumbHashFormatTests", dependencies: ["ThumbHashFormat"], exclude: ["Fixtures"]),
        .testTarget(name: "ThumbCodecTests", dependencies: ["ThumbCodec", "ThumbImaging", "CThumbCodec", "CCrypto", "CJXL",
                                                            "ThumbTestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "ThumbJSONTests", dependencies: ["ThumbJSON"]),
        .testTarget(name: "ThumbHTTPTests", dependencies: ["ThumbHTTP", "ThumbClock", "ThumbTestSupport"]),
        .testTarget(name: "ThumbFetchTests", dependencies: ["ThumbFetch", "CThumbCurl", "ThumbTestSupport"]),
        .testTarget(name: "ThumbRenderTests", dependencies: ["ThumbRender", "ThumbCodec", "ThumbImaging", "ThumbTestSupport"]),
        .testTarget(name: "ThumbServiceTests", dependencies: ["ThumbRender", "ThumbService", "ThumbFetch", "ThumbImaging", "ThumbClock",
                                                              "ThumbTestSupport"]),
        .testTarget(name: "ThumbAPITests", dependencies: ["ThumbRender", "ThumbAPI", "ThumbService", "ThumbSandbox", "ThumbHTTP", "ThumbFetch", "ThumbImaging", "ThumbCodec", "ThumbHashFormat",
                                                          "ThumbJSON", "ThumbClock", "ThumbTestSupport"]),
        .testTarget(name: "ThumbSandboxTests", dependencies: ["ThumbRender", "ThumbSandbox", "CThumbSandbox", "ThumbClock",
                                                              "ThumbImaging", "ThumbTestSupport"]),
        .testTarget(name: "ThumbdTests", dependencies: ["ThumbRender", "thumbd", "ThumbTestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "ThumbClientTests", dependencies: ["ThumbRender", "ThumbClient", "ThumbAPI", "ThumbService", "ThumbHTTP",
                                                             "ThumbTestSupport"]),
    ]
)
