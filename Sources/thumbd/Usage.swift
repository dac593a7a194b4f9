import ThumbCodec

/// `thumbd --version` text.
let versionText = "thumbd 0.1.0 (\(codecLibraryVersions))"

/// `thumbd --help` text.
let usageText = """
    Usage:
      thumbd [--config FILE] [--listen ADDR]      run the service in the foreground
      thumbd check-config --config FILE           validate a config file and print it
      thumbd thumbnail INPUT OUTPUT [--w N] [--h N] [--fit inside|cover|fill]
                       [--format auto|jpeg|png|webp|avif|rgba] [--q 1-100]
                       [--enlarge]
                                                  thumbnail one local file
      thumbd --version | --help

    ADDR is HOST:PORT, [IPv6]:PORT or unix:/path. Without --format, OUTPUT's
    extension (.jpg, .jpeg, .png, .webp, .avif, .rgba) picks the format, else auto.
    Exit status: 0 success, 1 runtime failure, 2 usage or configuration error.
    """
