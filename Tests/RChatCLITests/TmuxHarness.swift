import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

// Helpers for the full-screen view's end-to-end tests: real `rchat` views in
// detached tmux sessions on a tmux server of this test's own (`tmux -S SOCKET`, the socket in
// the test's sandbox), driven with send-keys and read with capture-pane. Every wait polls the
// capture against a deadline.

final class TmuxScreens {
    /// Part of every session name, so names are unique to this test.
    let server = "rchat-e2e-\(UUID().uuidString.prefix(8))"
    private let box: Sandbox
    private(set) var sessions: [String] = []
    static let executable: String? = {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/tmux"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }()

    /// The server's socket, inside the sandbox: removed with it.
    let socket: String

    init(box: Sandbox) {
        self.box = box
        socket = box.path("tmux.sock")
    }

    /// Runs one tmux command and waits for it. Spawned and reaped by hand (posix_spawn,
    /// waitpid), not with Process: the first command forks the tmux server, which keeps the
    /// descriptors Process watches for the child's end, so Process would wait forever.
    @discardableResult
    func tmux(_ args: [String]) throws -> Run {
        let output = box.path("tmux-\(UUID().uuidString).out"), errors = output + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: output)
            try? FileManager.default.removeItem(atPath: errors)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let words = [Self.executable!, "-S", socket, "-f", "/dev/null"] + args
        var argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, Self.executable!, &actions, nil, &argv, environ)
        guard spawned == 0 else { throw TimedOut(what: "tmux could not start: \(spawned)", seconds: 0, context: "") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exit = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return Run(status: exit, stdout: text, stderr: (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
    }

    /// Opens a detached session of `columns`×`rows` running `command` (argv) with `env`
    /// set. When the command ends the pane keeps showing what it printed and its exit
    /// status ("[exited N]") until the session is killed.
    func open(_ session: String, _ command: [String], env: [String: String], columns: Int = 100, rows: Int = 30) throws {
        close(session)
        let assignments = env.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let line = (["env", "-u", "LC_ALL", "-u", "LC_CTYPE", "-u", "NO_COLOR"] + assignments + command).map(Self.quote).joined(separator: " ")
        let arguments = ["new-session", "-d", "-x", String(columns), "-y", String(rows), "-s", session,
                         "sh -c \(Self.quote(line + "; echo \"[exited $?]\"; exec cat"))"]
        // Killing the last session ends the server, and a new session asked for at that
        // moment can reach the server as it exits and fail: asked again until it starts.
        let deadline = Date(timeIntervalSinceNow: 5)
        var status = try tmux(arguments)
        while status.status != 0 && Date() < deadline {
            waitUntilDeadline(min(deadline, Date(timeIntervalSinceNow: 0.05)))
            status = try tmux(arguments)
        }
        guard status.status == 0 else { throw TimedOut(what: "tmux new-session exited \(status.status)", seconds: 5, context: status.stderr + line) }
        sessions.append(session)
    }

    /// Keys by tmux name ("Enter", "Tab", "C-q", "Up") or literal text with `literal`.
    func keys(_ session: String, _ keys: String..., literal: Bool = false) throws {
        try tmux(["send-keys", "-t", session] + (literal ? ["-l"] : []) + keys)
    }

    /// Types text and presses Enter.
    func type(_ session: String, _ text: String) throws {
        try keys(session, text, literal: true)
        try keys(session, "Enter")
    }

    /// What the pane shows now; with `escapes`, with the SGR sequences of each cell's style.
    func capture(_ session: String, escapes: Bool = false) throws -> String {
        try tmux(["capture-pane", "-p", "-t", session] + (escapes ? ["-e"] : [])).stdout
    }

    /// Where tmux's own grid has each of `marks` on screen row `row`, left to right (each
    /// searched after the one before), as columns: read in copy mode (jump-forward, then
    /// `copy_cursor_x`), so it is tmux's placement, not a count of the captured text. nil
    /// for a mark not found.
    func columns(_ session: String, row: Int, of marks: [Character]) throws -> [Int?] {
        try tmux(["copy-mode", "-t", session])
        defer { _ = try? tmux(["send-keys", "-t", session, "-X", "cancel"]) }
        try tmux(["send-keys", "-t", session, "-X", "top-line"])
        if row > 0 { try tmux(["send-keys", "-t", session, "-N", String(row), "-X", "cursor-down"]) }
        try tmux(["send-keys", "-t", session, "-X", "start-of-line"])
        var found: [Int?] = []
        var at = 0
        for mark in marks {
            try tmux(["send-keys", "-t", session, "-X", "jump-forward", String(mark)])
            let where_ = try tmux(["display-message", "-p", "-t", session, "#{copy_cursor_x} #{copy_cursor_y}"]).stdout
            let parts = where_.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            let moved = parts.count == 2 && parts[1] == row && parts[0] > at
            found.append(moved ? parts[0] : nil)
            if moved { at = parts[0] }
        }
        return found
    }

    func resize(_ session: String, columns: Int, rows: Int) throws {
        try tmux(["resize-window", "-t", session, "-x", String(columns), "-y", String(rows)])
    }

    /// Polls the capture about every 30 ms until `condition` holds; returns that capture.
    /// Throws, with the last capture, once `seconds` have passed.
    @discardableResult
    func screenUntilDeadline(_ session: String, _ what: String, seconds: Double = 15, escapes: Bool = false,
                             context: () -> String = { "" }, _ condition: (String) -> Bool) throws -> String {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var last = ""
        while true {
            let started = Date()
            last = try capture(session, escapes: escapes)
            if condition(last) { return last }
            if Date() >= deadline {
                throw TimedOut(what: "\(session): \(what)", seconds: seconds, context: "screen:\n\(last)\n\(context())")
            }
            waitUntilDeadline(min(deadline, started.addingTimeInterval(0.03)))
        }
    }

    /// Ends one session this object opened (a view that quit still shows its last screen).
    func close(_ session: String) {
        guard let i = sessions.firstIndex(of: session) else { return }
        _ = try? tmux(["kill-session", "-t", session])
        sessions.remove(at: i)
    }

    /// Ends the sessions this object opened, and only those.
    func closeAll() {
        for session in sessions { _ = try? tmux(["kill-session", "-t", session]) }
        sessions.removeAll()
    }

    static func quote(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// Lines of a capture, and the line holding some text.
extension String {
    var screenLines: [String] { split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    func line(containing text: String) -> String? { screenLines.first { $0.contains(text) } }
}
