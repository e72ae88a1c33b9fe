import Foundation
import Glibc

/// Programs the view starts and never waits for (a file's opener, a voice message's
/// player): in a session of their own, with no terminal (input, output and errors go
/// nowhere), so they can neither block the view nor draw over it.
enum Launch {
    /// `name` searched in `path` (a PATH list), or taken as a path when it has a slash;
    /// nil when nothing there can be run.
    static func executable(_ name: String, path: String?) -> String? {
        let candidates = name.contains("/") ? [name] : (path ?? "/usr/bin:/bin").split(separator: ":").map { "\($0)/\(name)" }
        return candidates.first { access($0, X_OK) == 0 }
    }

    /// Starts `arguments` (the program's path first). With `removing`, that file is removed
    /// once the program has exited (a temporary file or folder it reads). Returns the process,
    /// which runs until the program exits (setsid waits for it), or nil when it could not start.
    @discardableResult
    static func detached(_ arguments: [String], removing file: String? = nil, input: FileHandle? = nil) -> Process? {
        guard !arguments.isEmpty else { return nil }
        let script = #"f=$1; shift; "$@"; [ -n "$f" ] && rm -rf -- "$f""#
        let shell = ["/bin/sh", "-c", script, "rchat-launch", file ?? ""] + arguments
        let process = Process()
        let setsid = "/usr/bin/setsid"
        if access(setsid, X_OK) == 0 {
            process.executableURL = URL(fileURLWithPath: setsid)
            process.arguments = ["--wait"] + shell
        } else {
            process.executableURL = URL(fileURLWithPath: shell[0])
            process.arguments = Array(shell.dropFirst())
        }
        process.standardInput = input ?? FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        return process
    }
}
