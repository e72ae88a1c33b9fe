import Glibc
import Synchronization

/// A program and its arguments (argv[0] is the executable's path).
public struct AudioTool: Sendable, Equatable {
    public let executable: String
    public let arguments: [String]

    public init(executable: String, arguments: [String]) {
        self.executable = executable
        self.arguments = arguments
    }
}

/// The system's recorder and player: PipeWire's tools, else ALSA's.
public enum AudioTools {
    /// `pw-record` or `arecord` on PATH (whichever exists, in that order), with the arguments that
    /// record 16-bit mono 48 kHz WAV to `path` (ending in `.wav`: pw-record picks its container
    /// by the name); nil when neither exists.
    public static func recorder(to path: String, environment: [String: String]) -> AudioTool? {
        if let pw = find("pw-record", environment) {
            return AudioTool(executable: pw, arguments: ["--rate", "48000", "--channels", "1", "--format", "s16", path])
        }
        if let alsa = find("arecord", environment) {
            return AudioTool(executable: alsa, arguments: ["-q", "-t", "wav", "-f", "S16_LE", "-r", "48000", "-c", "1", path])
        }
        return nil
    }

    /// `pw-play` or `aplay` for a WAV file (`-`: read from standard input); nil when
    /// neither exists.
    public static func player(of path: String, environment: [String: String]) -> AudioTool? {
        if let pw = find("pw-play", environment) { return AudioTool(executable: pw, arguments: [path]) }
        if let alsa = find("aplay", environment) { return AudioTool(executable: alsa, arguments: ["-q", path]) }
        return nil
    }

    /// The first executable regular file called `name` in the environment's PATH.
    static func find(_ name: String, _ environment: [String: String]) -> String? {
        for directory in (environment["PATH"] ?? "").split(separator: ":") where !directory.isEmpty {
            let candidate = directory.hasSuffix("/") ? "\(directory)\(name)" : "\(directory)/\(name)"
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

/// A running recording: starts the recorder process; `finish()` stops it with SIGINT, waits for
/// it (bounded), and returns the WAV path; `cancel()` stops it and removes the file. Only the
/// process it started is signalled, by its PID, and it is reaped before that PID is let go.
public final class Recording: Sendable {
    private enum State {
        case running(pid_t)
        case stopped
    }

    /// How long a recorder has to write its file and exit after SIGINT before it is killed.
    static let stopTimeout: Double = 5

    public let tool: AudioTool
    public let path: String
    private let state: Mutex<State>

    /// Creates `path` as an empty 0600 file (the recorder keeps that mode when it writes it) and
    /// starts the recorder, its standard streams on /dev/null.
    public init(tool: AudioTool, path: String) throws(MediaError) {
        self.tool = tool
        self.path = path
        close(try FileBytes.create(path))
        do throws(MediaError) {
            state = Mutex(.running(try Self.spawn(tool)))
        } catch {
            unlink(path)
            throw error
        }
    }

    deinit { cancel() }

    /// Stops the recorder with SIGINT and returns the WAV it wrote. A recorder that had already
    /// stopped by itself, or left no samples, is an error and its file is removed.
    public func finish() throws(MediaError) -> String {
        guard let pid = take() else { throw MediaError(.recorder(executable: tool.executable, cause: "already stopped")) }
        let early = Self.exitStatus(pid, wait: false)
        let status = early ?? Self.stop(pid)
        do throws(MediaError) {
            if let early { throw MediaError(.recorder(executable: tool.executable, cause: "it stopped by itself, \(Self.describe(early))")) }
            guard let status else { throw MediaError(.recorder(executable: tool.executable, cause: "it did not stop within \(Int(Self.stopTimeout)) s")) }
            var info = stat()
            guard stat(path, &info) == 0, Int(info.st_size) > WAV.headerSize else {
                throw MediaError(.recorder(executable: tool.executable, cause: "no samples recorded, \(Self.describe(status))"))
            }
            return path
        } catch {
            unlink(path)
            throw error
        }
    }

    /// Stops the recorder and removes the file; nothing happens when it was already stopped.
    public func cancel() {
        guard let pid = take() else { return }
        _ = Self.stop(pid)
        unlink(path)
    }

    /// The PID of the running recorder, once: whoever takes it stops and reaps it.
    private func take() -> pid_t? {
        state.withLock { state in
            guard case .running(let pid) = state else { return nil }
            state = .stopped
            return pid
        }
    }

    private static func spawn(_ tool: AudioTool) throws(MediaError) -> pid_t {
        let argv = [tool.executable] + tool.arguments
        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The recorder must see SIGINT even when this process ignores or blocks it.
        var defaults = sigset_t(), none = sigset_t()
        sigemptyset(&defaults)
        sigemptyset(&none)
        for sig in [SIGINT, SIGTERM, SIGPIPE] { sigaddset(&defaults, sig) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, tool.executable, &actions, &attributes, cArgs, environ)
        guard spawned == 0 else {
            throw MediaError(.recorder(executable: tool.executable, cause: String(cString: strerror(spawned))))
        }
        return pid
    }

    /// SIGINT, then up to `stopTimeout` for it to exit; after that SIGKILL. The exit status, or
    /// nil when it had to be killed. The process is reaped either way.
    private static func stop(_ pid: pid_t) -> Int32? {
        kill(pid, SIGINT)
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let end = Double(deadline.tv_sec) + Double(deadline.tv_nsec) / 1e9 + stopTimeout
        while true {
            if let status = exitStatus(pid, wait: false) { return status }
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            if Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 >= end { break }
            var pause = timespec(tv_sec: 0, tv_nsec: 10_000_000)
            nanosleep(&pause, nil)
        }
        kill(pid, SIGKILL)
        _ = exitStatus(pid, wait: true)
        return nil
    }

    /// The wait status once the process has exited (reaping it); nil while it runs.
    private static func exitStatus(_ pid: pid_t, wait: Bool) -> Int32? {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, wait ? 0 : WNOHANG)
            if result == pid { return status }
            if result < 0 && errno == EINTR { continue }
            return nil
        }
    }

    /// A wait status in words.
    static func describe(_ status: Int32) -> String {
        let signal = status & 0x7F
        return signal == 0 ? "exit status \((status >> 8) & 0xFF)" : "signal \(signal)"
    }
}
