import Foundation

/// Starts a program in a session of its own, detached from this process and its terminal
/// (standard input, output and error go nowhere), and does not wait for it: the linger
/// after the view, an alert waiting to be clicked, a terminal opened for a clicked alert.
public enum Detached {
    /// `arguments[0]` is the program's path. False when it could not be started.
    /// `input`: what its standard input reads (through a pipe, then the end), for what must
    /// never be in a command line; `environment`: variables set for it.
    @discardableResult
    public static func start(_ arguments: [String], input: Data? = nil, environment: [String: String] = [:]) -> Bool {
        guard let program = arguments.first else { return false }
        let process = Process()
        let setsid = "/usr/bin/setsid"
        if FileManager.default.isExecutableFile(atPath: setsid) {
            process.executableURL = URL(fileURLWithPath: setsid)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = Array(arguments.dropFirst())
        }
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        var reading: FileHandle?
        if let input {
            guard let handle = filledPipe(input) else { return false }
            reading = handle
        }
        defer { try? reading?.close() }   // the program has its own copy
        process.standardInput = reading ?? FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        return (try? process.run()) != nil
    }

    /// The most `start` writes to a program's standard input (far below a pipe's 64 KiB).
    public static let inputLimit = 16_384

    /// The reading end of a new pipe that holds `input`, then its end (the writing end is
    /// closed). Written before the program starts, while this process holds the reading end:
    /// a program that exits at once never raises SIGPIPE here; at most `inputLimit`, so it
    /// fits in the pipe and never blocks. Both ends close on exec: no other program started
    /// meanwhile keeps them (the one started here gets its standard input, a copy).
    static func filledPipe(_ input: Data) -> FileHandle? {
        guard input.count <= inputLimit else { return nil }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let written = input.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        close(ends[1])
        guard written == input.count else {
            close(ends[0])
            return nil
        }
        return FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
    }

    /// A program by name (searched in `path`, a PATH list) or by path, if it can be run.
    public static func executable(_ name: String, path: String?) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        for dir in (path ?? "/usr/bin:/bin").split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") {
            return "\(dir)/\(name)"
        }
        return nil
    }

    /// This program's own path (what `/proc/self/exe` names).
    public static var ownPath: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    }
}

/// Waiting, for the commands, on something another process does: polled every 20 ms until
/// it holds or the deadline passes.
public enum Polling {
    /// The first non-nil `value()`, or nil once `seconds` have passed.
    public static func value<T, E: Error>(within seconds: Double, _ value: () throws(E) -> T?) throws(E) -> T? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while true {
            if let found = try value() { return found }
            if Date() >= deadline { return nil }
            usleep(20_000)
        }
    }

    /// Whether `condition` came to hold within `seconds`.
    @discardableResult
    public static func until<E: Error>(within seconds: Double, _ condition: () throws(E) -> Bool) throws(E) -> Bool {
        try value(within: seconds) { () throws(E) in try condition() ? true : nil } ?? false
    }
}
