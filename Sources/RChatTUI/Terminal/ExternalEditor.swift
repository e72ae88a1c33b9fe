import Foundation
import Glibc

/// Ctrl-X Ctrl-E and `/edit`: the draft goes to the user's editor (`$VISUAL`, else
/// `$EDITOR`, else `vi`) through a 0600 file in the account's home (never /tmp: nothing of
/// the account is written outside its home), and comes back as the new draft. The file is
/// removed whatever happens. The caller leaves curses first: the editor runs in the
/// foreground on the same terminal.
public struct ExternalEditor: Sendable {
    /// The editor as the shell reads it (it may carry arguments: `vim -u NONE`).
    public let command: String
    /// Where the file is written: the account's home.
    public let directory: String

    public enum Outcome: Equatable, Sendable {
        /// The file's text, its trailing line breaks removed.
        case edited(String)
        /// One line for the status bar; the draft stays as it was.
        case failed(String)
    }

    public init(environment: [String: String], directory: String) {
        command = Self.command(environment: environment)
        self.directory = directory
    }

    /// `$VISUAL`, else `$EDITOR`, else `vi` (an empty variable counts as unset).
    public static func command(environment: [String: String]) -> String {
        for name in ["VISUAL", "EDITOR"] {
            if let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty { return value }
        }
        return "vi"
    }

    /// The prefix of the files drafts are edited in.
    static let filePrefix = ".rchat-draft-"

    /// Removes draft files a view killed while its editor was open left in `directory`
    /// (called while no other view can run there: under the engine lock).
    public static func removeLeftovers(in directory: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasPrefix(filePrefix) { unlink("\(directory)/\(name)") }
    }

    /// Writes `draft`, runs the editor on it and waits for it, reads the file back.
    public func edit(_ draft: String) -> Outcome {
        var template = Array("\(directory)/\(Self.filePrefix)XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            return .failed("Could not write the draft for the editor in \(directory): \(Self.errorText(errno)); the draft is kept.")
        }
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { unlink(path) }
        _ = fchmod(fd, 0o600)
        let written = Self.writeAll(fd, Array(draft.utf8))
        close(fd)
        guard written else {
            return .failed("Could not write the draft for the editor: \(Self.errorText(errno)); the draft is kept.")
        }
        let status: Int32
        switch run(path) {
        case .failure(let message): return .failed(message)
        case .success(let s): status = s
        }
        if status != 0 {
            if status == 127 << 8 {
                return .failed("No editor \(command) found: set $VISUAL or $EDITOR; the draft is kept.")
            }
            let how = (status & 0x7F) == 0 ? "exited with status \((status >> 8) & 0xFF)" : "was stopped by signal \(status & 0x7F)"
            return .failed("The editor (\(command)) \(how); the draft is kept.")
        }
        // Read back never through a link (mkstemp created it with O_EXCL: never through one).
        let back = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard back >= 0, let data = try? FileHandle(fileDescriptor: back, closeOnDealloc: true).readToEnd() ?? Data() else {
            return .failed("The editor's file is gone; the draft is kept.")
        }
        var text = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
        while text.last?.isNewline == true { text.removeLast() }
        return .edited(text)
    }

    private enum RunResult { case success(Int32), failure(String) }

    /// `sh -c 'exec <command> "$@"' <command> <path>` (as git runs an editor, the shell
    /// replaced by the editor so that its stops are seen here), in the foreground: the view
    /// ignores Ctrl-C meanwhile, the editor gets it as usual.
    private func run(_ path: String) -> RunResult {
        let argv = ["/bin/sh", "-c", "exec " + command + " \"$@\"", command, path]
        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for sig in [SIGINT, SIGQUIT, SIGPIPE] { sigaddset(&defaults, sig) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
        let previous = signal(SIGINT, SIG_IGN)
        defer { signal(SIGINT, previous) }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", nil, &attributes, cArgs, environ)
        guard spawned == 0 else {
            return .failure("Could not start the editor (\(command)): \(Self.errorText(spawned)); the draft is kept.")
        }
        var status: Int32 = 0
        while true {
            if waitpid(pid, &status, WUNTRACED) < 0 {
                guard errno == EINTR else { return .failure("Lost the editor: \(Self.errorText(errno)); the draft is kept.") }
                continue
            }
            // Stopped (Ctrl-Z in an editor that suspends only itself): nobody else would
            // wake it, and the view would wait for ever.
            guard status & 0xFF == 0x7F else { return .success(status) }
            kill(pid, SIGCONT)
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }

    private static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }
}
