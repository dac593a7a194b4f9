import Foundation

// Entry point: parse the command line, run one command, exit with its status
// (SPEC §9: 0 success, 1 runtime failure, 2 usage or configuration error).
let command: Command
do {
    command = try CommandLineParser.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("thumbd: \(error.message)\nTry 'thumbd --help'.\n".utf8))
    exit(2)
}

switch command {
case .help:
    print(usageText)
case .version:
    print(versionText)
case .thumbnail(let thumbnail):
    exit(thumbnail.run())
case .serve, .checkConfig:
    FileHandle.standardError.write(Data("thumbd: the service is not built yet (issue 4)\n".utf8))
    exit(1)
}
