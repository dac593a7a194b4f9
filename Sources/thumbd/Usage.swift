import ThumbCodec

/// `thumbd --version` text.
let versionText = "thumbd 0.1.0 (\(codecLibraryVersions))"

/// `thumbd --help` text.
let usageText = """
    Usage:
      thumbd [--config FILE] [--listen ADDR]      run the service in the foreground
      thumbd check-config --config FILE           validate a config file and print it
      thumbd thumbnail INPUT OUTPUT [--w N] [--h N] [--fit inside|cover|fill|contain]
                       [--format auto|jpeg|png|webp|avif|jxl|rgba] [--q 1-100|auto]
                       [--enlarge] [--gravity G] [--fp X,Y] [--bg RRGGBB[AA]]
                       [--blur 0.3-100] [--sharpen 0.3-10] [--animated 0|1]
                                                  thumbnail one local file
      thumbd info INPUT                           print a local file's /info object (JSON)
      thumbd --version | --help

    ADDR is HOST:PORT, [IPv6]:PORT or unix:/path. Without --format, OUTPUT's
    extension (.jpg, .jpeg, .png, .webp, .avif, .jxl, .rgba) picks the format, else auto.
    G is center, north, south, east, west, northeast, northwest, southeast,
    southwest or attention (cover and contain). --fp X,Y (fractions 0-1, up to 3
    decimals) places the cover crop; not with --gravity. --bg pads contain and
    is what JPEG flattens alpha onto. --blur and --sharpen are sigmas in pixels
    with at most one decimal. An animated GIF or WebP made into webp animates;
    --animated 0 (or any other format) takes its first frame.
    Exit status: 0 success, 1 runtime failure, 2 usage or configuration error.
    """
