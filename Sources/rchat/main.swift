import Foundation
import RChatEngine

// The `rchat` executable: parses arguments and wires them to the engine. No logic lives here.

let commands: [Command] = AccountCommands.all + ContactCommands.all + MessageCommands.all + ContactStateCommands.all
    + CheckCommand.all
    + [DemoCommands.command, TUICommand.view, Linger.command]

func topLevelHelp() -> String {
    let width = commands.map(\.usage.count).max() ?? 0
    let lines = commands.map { c in
        "  " + c.usage.padding(toLength: width + 2, withPad: " ", startingAt: 0) + c.summary
    }
    return """
    rChat for the terminal — an end-to-end encrypted messenger whose every status is true.

    usage: rchat COMMAND [OPTIONS]

    \(lines.joined(separator: "\n"))

    `rchat COMMAND --help` explains each. Every command takes --home DIR and --device-dir DIR.
    Exit codes: 0 ok, 1 runtime failure, 2 usage error.
    RCHAT_FAKE_NOW=<unix seconds> replaces the clock (for tests only).

    """
}

let argv = CommandLine.arguments
// No command, or only options (--home, --device-dir): the full-screen view.
let opensView = argv.count == 1 || (argv[1].hasPrefix("-") && !["--help", "-h"].contains(argv[1]))
if !opensView && (argv[1] == "--help" || argv[1] == "-h" || argv[1] == "help") {
    print(topLevelHelp(), terminator: "")
    exit(0)
}

// Two-word commands (`account export`, `keys rotate`) match before one-word ones.
let twoWords = argv.count > 2 ? "\(argv[1]) \(argv[2])" : ""
guard let command = opensView ? TUICommand.view
        : commands.first(where: { !$0.name.isEmpty && $0.name == twoWords })
          ?? commands.first(where: { !$0.name.isEmpty && $0.name == argv[1] }) else {
    Exit.usage("unknown command \"\(argv[1])\" (see rchat --help)")
}
let rest = argv.dropFirst(opensView ? 1 : command.name.contains(" ") ? 3 : 2)

do {
    let arguments = try Arguments(rest, valued: command.valued, flags: command.flags)
    if arguments.wantsHelp {
        print(command.help, terminator: "")
        exit(0)
    }
    let locations = Locations.resolve(home: arguments.value("--home"), deviceDirectory: arguments.value("--device-dir"))
    try command.run(arguments, locations)
} catch let error as Arguments.UsageError {
    Exit.usage("\(command.name): \(error.description)")
} catch let error as EngineError {
    if error.isUsage { Exit.usage(error.description) }
    Exit.failure(error.description)
} catch {
    Exit.failure("\(error)")
}
