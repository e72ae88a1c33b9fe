import Foundation
import Glibc
import RChatCore

/// Whether the view's window is shown by the terminal multiplexer it runs in: tmux (`TMUX`
/// set; asked for its pane's session's attached clients and whether its window is the one
/// shown) or GNU screen (`STY` set; `screen -ls` says Attached or Detached). Asked only when
/// an alert depends on it, at most every few seconds (`ChatView`), each answer within a
/// second or `.unknown`.
public enum MultiplexerProbe {
    public static func ask(environment: [String: String]) -> AlertPolicy.Multiplexer {
        if let tmux = environment["TMUX"], !tmux.isEmpty {
            var arguments = ["display-message", "-p"]
            if let pane = environment["TMUX_PANE"], !pane.isEmpty { arguments += ["-t", pane] }
            arguments.append("#{session_attached} #{window_active}")
            return run("tmux", arguments, environment).map(tmuxAnswer) ?? .unknown
        }
        if let session = environment["STY"], !session.isEmpty {
            return run("screen", ["-ls", session], environment).map { screenAnswer($0, session: session) } ?? .unknown
        }
        return .none
    }

    /// tmux's `#{session_attached} #{window_active}`: clients attached to the session, and 1
    /// when the view's window is the session's current one.
    static func tmuxAnswer(_ output: String) -> AlertPolicy.Multiplexer {
        let words = output.split(whereSeparator: \.isWhitespace)
        guard words.count == 2, let clients = Int(words[0]), let active = Int(words[1]) else { return .unknown }
        return clients > 0 && active == 1 ? .attached : .detached
    }

    /// `screen -ls NAME`: the session's line ends "(Attached)" or "(Detached)" (also
    /// "(Multi, attached)").
    static func screenAnswer(_ output: String, session: String) -> AlertPolicy.Multiplexer {
        guard let line = output.split(separator: "\n").first(where: { $0.contains(session) })?.lowercased() else { return .unknown }
        if line.contains("detached)") { return .detached }
        if line.contains("attached)") { return .attached }
        return .unknown
    }

    /// The program's standard output, if it ended within a second.
    private static func run(_ name: String, _ arguments: [String], _ environment: [String: String]) -> String? {
        guard let path = Launch.executable(name, path: environment["PATH"]) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let deadline = Date(timeIntervalSinceNow: 1)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        return String(decoding: data, as: UTF8.self)
    }
}
