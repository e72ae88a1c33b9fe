import CEpoll
import Glibc

/// A failed system call, with the errno text; what the relay logs and the client reports.
public struct NetError: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public let code: Int32

    public init(_ operation: String, code: Int32 = rchat_errno()) {
        self.operation = operation
        self.code = code
    }

    public var description: String {
        if code == -2 { return "\(operation): host name does not resolve" }
        return "\(operation): \(String(cString: strerror(code)))"
    }
}

/// Process-wide settings every networked program wants before its first socket.
public enum NetSetup {
    /// Writing to a socket the peer closed must be an error, not a SIGPIPE that kills us.
    public static func ignoreBrokenPipes() { rchat_ignore_sigpipe() }

    /// Raises the open-file limit to the hard maximum; returns the new limit.
    @discardableResult
    public static func raiseDescriptorLimit() -> Int { rchat_raise_nofile_limit() }
}

/// Seconds on the monotonic clock: for timeouts and latency, never for dates.
public func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// Nanoseconds on the monotonic clock.
public func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
