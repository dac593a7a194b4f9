import Foundation
import ThumbAPI
import ThumbSandbox

// Entry point: parse the command line, run one command, exit with its status
// (CommandLine.md: 0 success, 1 runtime failure, 2 usage or configuration error).

// A render worker the daemon started (Isolation.md): internal, never on the usage line.
if CommandLine.arguments.count >= 2 && CommandLine.arguments[1] == WorkerMain.subcommand {
    WorkerMain.run(arguments: Array(CommandLine.arguments.dropFirst(2)))
}

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
case .info(let path):
    exit(InfoCommand.run(path: path))
case .serve(let configPath, let listen):
    exit(Serve.run(configPath: configPath, listen: listen))
case .checkConfig(let path):
    do {
        let config = try DaemonConfiguration.load(path: path)
        print(config.json.serialized(indent: 2))
    } catch {
        FileHandle.standardError.write(Data("thumbd: \(error)\n".utf8))
        exit(2)
    }
}
