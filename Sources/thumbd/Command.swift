import ThumbImaging
import ThumbRender

/// What the command line asks thumbd to do (CommandLine.md).
enum Command: Equatable {
    /// Run the service in the foreground.
    case serve(configPath: String?, listen: String?)
    /// Validate a config file and print the effective configuration.
    case checkConfig(configPath: String)
    /// Thumbnail one local file.
    case thumbnail(ThumbnailCommand)
    /// `thumbd info INPUT`: the `/info` object of a local file.
    case info(path: String)
    case version
    case help
}

/// `thumbd thumbnail INPUT OUTPUT [--w N] [--h N] [--fit F] [--format F] [--q N] [--enlarge]
/// [--gravity G] [--fp X,Y] [--bg HEX] [--blur S] [--sharpen S] [--animated 0|1]`.
struct ThumbnailCommand: Equatable {
    var input: String
    var output: String
    var width: Int?
    var height: Int?
    var fit: Fit = .inside
    /// From `--format`, else OUTPUT's extension, else `.auto`.
    var format: OutputFormat
    var quality: Int?
    var enlarge = false
    /// `--gravity`, `--fp`, `--bg`, `--blur`, `--sharpen`, with the query's
    /// rules; there is no `dpr` here, so blur and sharpen are in result pixels.
    var composition = CompositionParameters()
    /// `--animated 0` takes an animated source's first frame whatever the
    /// format; otherwise `webp` animates it (SPEC §14).
    var animated = true
}

/// A command line that cannot be understood: exit status 2 with `message`.
struct UsageError: Error, Equatable {
    let message: String
}
