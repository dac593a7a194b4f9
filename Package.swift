// swift-tools-version:6.0
import PackageDescription

// Layers, bottom to top (arrows point one way):
//   CJPEG/CPNG/CCrypto (system libraries) → CThumbCodec (C shim, owns every setjmp)
//   ThumbImaging (bitmaps, geometry, resampling; no I/O)
//   ThumbCodec (sniff, probe, decode, encode) → ThumbImaging, CThumbCodec
//   ThumbHTTP (sockets, parser, connections; no images) → CThumbSys
//   ThumbService (pipeline, fetcher, caches, handler) → all of the above
//   thumbd (CLI, signals, systemd) → ThumbService
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
        .systemLibrary(name: "CLCMS2", pkgConfig: "lcms2",
                       providers: [.apt(["liblcms2-dev"])]),
        .target(name: "CThumbCodec", dependencies: ["CJPEG", "CPNG", "CLCMS2"],
                cSettings: [.unsafeFlags(["-O2"])]),
        .target(name: "CThumbSys"),

        .target(name: "ThumbImaging",
                swiftSettings: [.unsafeFlags(["-Ounchecked"], .when(configuration: .release))],
                linkerSettings: [.linkedLibrary("m")]),
        .target(name: "ThumbCodec", dependencies: ["CThumbCodec", "ThumbImaging"]),
        .target(name: "ThumbHTTP", dependencies: ["CThumbSys"]),

        .target(name: "ThumbService", dependencies: ["ThumbCodec", "ThumbImaging", "ThumbHTTP", "CCrypto"]),

        .executableTarget(name: "thumbd",
                          dependencies: ["ThumbService", "ThumbCodec", "ThumbImaging", "ThumbHTTP"]),

        .executableTarget(name: "ThumbBench", dependencies: ["ThumbService"]),
        .executableTarget(name: "FuzzCodec", dependencies: ["ThumbCodec", "ThumbImaging"]),
        .executableTarget(name: "FuzzHTTPParser", dependencies: ["ThumbHTTP"]),
        .executableTarget(name: "HTTPBench", dependencies: ["ThumbHTTP"]),

        .testTarget(name: "ThumbImagingTests", dependencies: ["ThumbImaging"]),
        .testTarget(name: "ThumbCodecTests", dependencies: ["ThumbCodec", "ThumbImaging", "CThumbCodec", "CCrypto"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "ThumbHTTPTests", dependencies: ["ThumbHTTP"]),
        .testTarget(name: "ThumbServiceTests", dependencies: ["ThumbService", "ThumbHTTP"]),
        .testTarget(name: "ThumbdTests", dependencies: ["thumbd"]),
    ]
)
