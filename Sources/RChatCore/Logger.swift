import Foundation

/// How much a log line matters; a `Logger` drops lines below its threshold.
/// Ordered from most to least severe: `.error` < `.warning` < `.note` < `.debug`.
public enum LogLevel: String, Sendable, CaseIterable, Comparable {
    /// Something failed and was not done (a store write, a persistence commit).
    case error
    /// Something was refused or limited, and the program carries on.
    case warning
    /// What happened: a connection, a session, a link (the default threshold).
    case note
    /// Detail for finding a fault.
    case debug

    private var rank: Int { Self.allCases.firstIndex(of: self)! }
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }
}

/// The one logger of relay, engine and view: a threshold, a prefix and where lines go.
/// A line below the threshold is never built (its text is an autoclosure). Callers
/// write `log("…")` for a note, or `log.warning("…")`.
///
/// What is logged is text the caller built: never payloads, message texts or keys. Key
/// types hold their bytes in `SecretBytes`, which has no description that shows them.
public struct Logger: Sendable {
    public let threshold: LogLevel
    private let prefix: String
    private let sink: @Sendable (String) -> Void

    /// `sink` receives each whole line, `prefix` first, without a line break.
    public init(threshold: LogLevel = .note, prefix: String = "", sink: @escaping @Sendable (String) -> Void) {
        self.threshold = threshold
        self.prefix = prefix
        self.sink = sink
    }

    /// One line per call on stderr, written at once (one write per line).
    public static func standardError(prefix: String, threshold: LogLevel = .note) -> Logger {
        Logger(threshold: threshold, prefix: prefix) { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    }

    /// Logs nothing.
    public static let discarding = Logger(threshold: .error) { _ in }

    public func logs(_ level: LogLevel) -> Bool { level <= threshold }

    public func log(_ level: LogLevel, _ line: @autoclosure () -> String) {
        guard logs(level) else { return }
        sink(prefix + line())
    }

    public func error(_ line: @autoclosure () -> String) { log(.error, line()) }
    public func warning(_ line: @autoclosure () -> String) { log(.warning, line()) }
    public func note(_ line: @autoclosure () -> String) { log(.note, line()) }
    public func debug(_ line: @autoclosure () -> String) { log(.debug, line()) }

    /// `log("…")`: a note.
    public func callAsFunction(_ line: @autoclosure () -> String) { log(.note, line()) }

    /// The same destination with `more` after the prefix ("sam: " for the demo's contact).
    public func prefixed(_ more: String) -> Logger {
        Logger(threshold: threshold, prefix: prefix + more, sink: sink)
    }
}
