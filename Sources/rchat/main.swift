import Foundation
import RChatCommandLine
import RChatCore
import RChatEngine
import RChatWire

// The `rchat` executable: parses arguments and wires them to the engine. No logic lives here.

let commands = CommandTable.all

func topLevelHelp() -> String {
    let width = commands.map(\.usage.count).max() ?? 0
    let lines = commands.map { c in
        "  " + c.usage.padding(toLength: width + 2, withPad: " ", startingAt: 0) + c.summary
    }
    return """
    rChat for the terminal — an end-to-end encrypted messenger whose every status is true.

    usage: rchat COMMAND [OPTIONS]

    \(lines.joined(separator: "\n"))

    `rchat COMMAND --help` explains each. Every command takes, before or after its name:
    \(OptionHelp.list(GlobalOptions.shown))
    `rchat --version` prints the version. Exit codes: 0 ok, 1 runtime failure, 2 usage error.
    RCHAT_FAKE_NOW=<unix seconds> replaces the clock (for tests only).

    """
}

if CommandLine.arguments.dropFirst().elementsEqual(["--version"]) {
    print(RChatVersion.line(program: "rchat", relayProtocol: RelayProtocol.version))
    exit(0)
}

// Global options may come before the command word as well as after it.
let globals = OptionParser(GlobalOptions.all, helpHint: "rchat --help")
var before: Arguments, words: ArraySlice<String>
/// No command word and options of the view's own (`--open NAME`): all of them are the view's.
var viewOnly = false
do {
    (before, words) = try globals.parse(CommandLine.arguments.dropFirst(), stopAtPositional: true)
} catch {
    guard let parsed = try? TUICommand.view.parser.parse(CommandLine.arguments.dropFirst()),
          parsed.arguments.positionals.isEmpty else { Exit.usage(error.description) }
    (before, words, viewOnly) = (Arguments(), [], true)
}
if words.first == "help" || (words.isEmpty && before.wantsHelp) {
    print(topLevelHelp(), terminator: "")
    exit(0)
}

// No command, only options (--home, --device-dir): the full-screen view. Two-word commands
// (`account export`, `keys rotate`) match before one-word ones.
let twoWords = words.prefix(2).joined(separator: " ")
guard let command = words.isEmpty ? TUICommand.view
        : commands.first(where: { !$0.name.isEmpty && $0.name == twoWords })
          ?? commands.first(where: { !$0.name.isEmpty && $0.name == words.first }) else {
    Exit.usage("unknown command \"\(words.first!)\" (see rchat --help)")
}
let rest = viewOnly ? CommandLine.arguments.dropFirst() : words.dropFirst(command.name.isEmpty ? 0 : command.name.contains(" ") ? 2 : 1)

// A write past a file-size limit (`ulimit -f`) fails with EFBIG, which the engine handles
// (a file being received is discarded), instead of a SIGXFSZ that would kill it mid-batch.
signal(SIGXFSZ, SIG_IGN)

do {
    let arguments = before.merging(try command.parser.parse(rest).arguments)
    if arguments.wantsHelp {
        print(command.help, terminator: "")
        exit(0)
    }
    let locations = Locations.resolve(home: arguments.value(GlobalOptions.home.name),
                                      deviceDirectory: arguments.value(GlobalOptions.deviceDirectory.name))
    try command.run(arguments, locations)
} catch let error as Arguments.UsageError {
    Exit.usage(command.name.isEmpty ? error.description : "\(command.name): \(error.description)")
} catch let error as EngineError {
    if error.isUsage { Exit.usage(error.description) }
    Exit.failure(error.description)
} catch {
    Exit.failure("\(error)")
}
