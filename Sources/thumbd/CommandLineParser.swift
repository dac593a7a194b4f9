import ThumbImaging
import ThumbRender

/// Turns `argv` (without the program name) into a `Command`.
enum CommandLineParser {
    static func parse(_ args: [String]) throws(UsageError) -> Command {
        guard let first = args.first else { return .serve(configPath: nil, listen: nil) }
        switch first {
        case "--help", "-h", "help": return .help
        case "--version", "-V": return .version
        case "thumbnail": return .thumbnail(try parseThumbnail(Array(args.dropFirst())))
        case "info":
            let options = try parseOptions(Array(args.dropFirst()), valued: [], flags: [])
            guard options.positional.count == 1 else { throw UsageError(message: "info needs exactly one INPUT") }
            return .info(path: options.positional[0])
        case "check-config":
            let options = try parseOptions(Array(args.dropFirst()), valued: ["--config"], flags: [])
            guard let path = options.values["--config"] else {
                throw UsageError(message: "check-config needs --config FILE")
            }
            guard options.positional.isEmpty else {
                throw UsageError(message: "unexpected argument '\(options.positional[0])'")
            }
            return .checkConfig(configPath: path)
        default:
            let options = try parseOptions(args, valued: ["--config", "--listen"], flags: [])
            guard options.positional.isEmpty else {
                throw UsageError(message: "unknown command '\(options.positional[0])' (see thumbd --help)")
            }
            return .serve(configPath: options.values["--config"], listen: options.values["--listen"])
        }
    }

    private static func parseThumbnail(_ args: [String]) throws(UsageError) -> ThumbnailCommand {
        let options = try parseOptions(args, valued: ["--w", "--h", "--fit", "--format", "--q", "--gravity", "--fp",
                                                      "--bg", "--blur", "--sharpen", "--animated"],
                                       flags: ["--enlarge"])
        guard options.positional.count == 2 else {
            throw UsageError(message: "thumbnail needs INPUT and OUTPUT")
        }
        let output = options.positional[1]
        var command = ThumbnailCommand(input: options.positional[0], output: output,
                                       format: formatFromExtension(output))
        command.width = try integer(options.values["--w"], name: "--w", in: 1...Int(Int32.max))
        command.height = try integer(options.values["--h"], name: "--h", in: 1...Int(Int32.max))
        // `auto` (lower case only, SPEC §17): the search's q, printed on standard error.
        command.quality = options.values["--q"] == "auto" ? AutoQuality.unresolved
            : try integer(options.values["--q"], name: "--q", in: 1...100)
        if command.width == nil && command.height == nil {
            throw UsageError(message: "thumbnail needs --w or --h (or both)")
        }
        if let fit = options.values["--fit"] {
            guard let value = Fit(rawValue: fit) else {
                throw UsageError(message: "--fit must be \(CompositionParameters.fitRule), not '\(fit)'")
            }
            command.fit = value
        }
        // The same rule as the query's fit (API.md § Geometry), caught here so
        // that it is a usage error (exit 2), not a failed render (exit 1).
        if command.fit != .inside && (command.width == nil || command.height == nil) {
            throw UsageError(message: "--fit \(command.fit.rawValue) needs both --w and --h")
        }
        if let format = options.values["--format"] {
            guard let value = OutputFormat(rawValue: format), commandLineFormats.contains(value) else {
                throw UsageError(message: "--format must be auto, jpeg, png, webp, avif or rgba, not '\(format)'")
            }
            command.format = value
        }
        command.enlarge = options.flags.contains("--enlarge")
        if let animated = try integer(options.values["--animated"], name: "--animated", in: 0...1) {
            command.animated = animated == 1
        }
        command.composition = try composition(options.values, fit: command.fit)
        return command
    }

    /// `--gravity`, `--fp`, `--bg`, `--blur`, `--sharpen` under the query's
    /// rules (API.md § Composition), so what `/thumbnail` refuses is a usage
    /// error here.
    private static func composition(_ values: [String: String], fit: Fit) throws(UsageError) -> CompositionParameters {
        typealias Rules = CompositionParameters
        var c = CompositionParameters()
        if let text = values["--gravity"] {
            guard let value = Gravity(rawValue: text) else {
                throw UsageError(message: "--gravity must be \(Rules.gravityRule), not '\(text)'")
            }
            c.gravity = value
        }
        if let text = values["--fp"] {
            guard let value = Rules.focalPoint(parsing: text) else {
                throw UsageError(message: "--fp must be \(Rules.focalPointRule), not '\(text)'")
            }
            guard c.gravity == nil else { throw UsageError(message: "--fp and --gravity cannot both be given") }
            guard fit == .cover else { throw UsageError(message: "--fp needs --fit cover") }
            c.focalPoint = value
        }
        if let text = values["--bg"] {
            guard let value = RGBAColor(hex: text) else {
                throw UsageError(message: "--bg must be \(Rules.backgroundRule), not '\(text)'")
            }
            c.background = value
        }
        if let text = values["--blur"] {
            guard let value = Rules.tenths(parsing: text, in: Rules.blurRange) else {
                throw UsageError(message: "--blur must be \(Rules.blurRule), not '\(text)'")
            }
            c.blurTenths = value
        }
        if let text = values["--sharpen"] {
            guard let value = Rules.tenths(parsing: text, in: Rules.sharpenRange) else {
                throw UsageError(message: "--sharpen must be \(Rules.sharpenRule), not '\(text)'")
            }
            c.sharpenTenths = value
        }
        return c
    }

    /// The formats `thumbnail` writes: every format of `/thumbnail`.
    static let commandLineFormats: [OutputFormat] = OutputFormat.allCases

    /// CommandLine.md: OUTPUT's extension picks the format when `--format` is absent.
    static func formatFromExtension(_ path: String) -> OutputFormat {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: ".") else { return .auto }
        switch name[name.index(after: dot)...].lowercased() {
        case "jpg", "jpeg": return .jpeg
        case "png": return .png
        case "webp": return .webp
        case "avif": return .avif
        case "jxl": return .jxl
        case "rgba": return .rgba
        default: return .auto
        }
    }

    private static func integer(_ text: String?, name: String,
                                in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(message: "\(name) must be an integer in \(range.lowerBound)…\(range.upperBound), not '\(text)'")
        }
        return value
    }

    private struct Options {
        var values: [String: String] = [:]
        var flags: Set<String> = []
        var positional: [String] = []
    }

    /// `--name value`, `--name=value` and bare flags; anything else starting with `-` is an error.
    private static func parseOptions(_ args: [String], valued: Set<String>,
                                     flags: Set<String>) throws(UsageError) -> Options {
        var options = Options()
        var i = 0
        while i < args.count {
            let arg = args[i]
            i += 1
            guard arg.hasPrefix("-"), arg != "-" else {
                options.positional.append(arg)
                continue
            }
            var name = arg
            var inlineValue: String?
            if let eq = arg.firstIndex(of: "=") {
                name = String(arg[..<eq])
                inlineValue = String(arg[arg.index(after: eq)...])
            }
            if flags.contains(name), inlineValue == nil {
                options.flags.insert(name)
            } else if valued.contains(name) {
                guard let value = inlineValue ?? (i < args.count ? args[i] : nil) else {
                    throw UsageError(message: "\(name) needs a value")
                }
                if inlineValue == nil { i += 1 }
                guard options.values[name] == nil else {
                    throw UsageError(message: "\(name) given twice")
                }
                options.values[name] = value
            } else {
                throw UsageError(message: "unknown option '\(name)'")
            }
        }
        return options
    }
}
