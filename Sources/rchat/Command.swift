import Foundation
import RChatCore
import RChatEngine
import RChatCommandLine

/// One `rchat` subcommand: its usage line, its help, the options it accepts and what it does.
struct Command: Sendable {
    let name: String
    let usage: String
    let summary: String
    var details: String = ""
    /// Its own options, beside `GlobalOptions`; the help lists them from these.
    var options: [Option] = []
    let run: @Sendable (Arguments, Locations) throws -> Void

    var parser: OptionParser {
        OptionParser(options + GlobalOptions.all, helpHint: name.isEmpty ? "rchat --help" : "rchat \(name) --help")
    }

    var help: String {
        var text = "usage: \(usage)\n\n\(summary)\n"
        if !details.isEmpty { text += "\n\(details)\n" }
        if !options.isEmpty { text += "\nOptions:\n\(OptionHelp.list(options))\n" }
        text += """

        Every command also takes:
        \(OptionHelp.list(GlobalOptions.shown))

        """
        return text
    }
}

/// What a command prints on failure: one line on stderr, then the exit code.
enum Exit {
    static func usage(_ message: String) -> Never {
        warn(message)
        exit(2)
    }

    static func failure(_ message: String) -> Never {
        warn(message)
        exit(1)
    }
}

/// Standard output, flushed as each line is written so a script reading a pipe sees it at
/// once. Nothing a terminal would act on gets through (`TerminalText`); a line break in
/// `line` stays one (fields that must stay on one line are sanitized `.shown` first).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((TerminalText.sanitized(line, breaks: .kept) + "\n").utf8))
}

/// One line on stderr, `rchat: ` first: errors and the engine's log. Whatever it quotes
/// (a contact's name, a file name) cannot break the line or reach the terminal raw.
func warn(_ message: String) {
    FileHandle.standardError.write(Data(("rchat: " + TerminalText.sanitized(message, breaks: .shown) + "\n").utf8))
}

/// The engine's log for commands that run it in the foreground (`rchat sync`, `rchat
/// check`): one `rchat: ` line each on stderr.
let engineLog = Logger { warn($0) }
