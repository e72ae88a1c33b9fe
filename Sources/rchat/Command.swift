import Foundation
import RChatEngine

/// One `rchat` subcommand: its usage line, its help, the options it accepts and what it does.
struct Command: Sendable {
    let name: String
    let usage: String
    let summary: String
    var details: String = ""
    var valued: Set<String> = []
    var flags: Set<String> = []
    let run: @Sendable (Arguments, Locations) throws -> Void

    var help: String {
        var text = "usage: \(usage)\n\n\(summary)\n"
        if !details.isEmpty { text += "\n\(details)\n" }
        text += """

        Every command also takes:
          --home DIR        account data (default $XDG_DATA_HOME/rchat; or RCHAT_HOME)
          --device-dir DIR  this machine's device keystore (default $XDG_STATE_HOME/rchat-device;
                            or RCHAT_DEVICE_DIR)

        """
        return text
    }
}

/// What a command prints on failure: one line on stderr, then the exit code.
enum Exit {
    static func usage(_ message: String) -> Never {
        FileHandle.standardError.write(Data("rchat: \(message)\n".utf8))
        exit(2)
    }

    static func failure(_ message: String) -> Never {
        FileHandle.standardError.write(Data("rchat: \(message)\n".utf8))
        exit(1)
    }
}

/// Standard output, flushed as each line is written so a script reading a pipe sees it at once.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
