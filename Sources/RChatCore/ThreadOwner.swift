import Foundation
import Synchronization

/// The one thread whose state a thread-confined object is (the engine's state on the engine
/// thread, the relay's on its loop thread, the view's on the UI thread), and a debug-build
/// check that the state is touched there only.
///
/// The object claims its thread when it starts running there (`claim()`), and each method
/// that touches its confined state begins with `check()`. Before the claim (while whoever
/// makes the object sets it up) and after `release()`, any thread passes. In release builds
/// both are empty and inlined away; in debug builds `check()` is one atomic load and a
/// compare, and a wrong thread is reported through `ThreadOwner.reportViolations(to:)`
/// (an assertion failure unless a test installed its own handler).
public final class ThreadOwner: Sendable {
    /// What the confined state is, for the report ("engine", "relay loop", "view").
    public let name: String
    #if DEBUG
    /// The owning thread's `pthread_self()`; 0 while unclaimed.
    @usableFromInline let owner = Atomic<UInt>(0)
    #endif

    public init(_ name: String) {
        self.name = name
    }

    /// From now on, the calling thread is the only one allowed.
    @inlinable
    public func claim() {
        #if DEBUG
        owner.store(UInt(pthread_self()), ordering: .releasing)
        #endif
    }

    /// Any thread is allowed again (the owning thread is about to end or hand the object back).
    @inlinable
    public func release() {
        #if DEBUG
        owner.store(0, ordering: .releasing)
        #endif
    }

    /// Reports the call if the object is claimed by another thread (debug builds only).
    @inlinable
    public func check(_ function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        let claimed = owner.load(ordering: .acquiring)
        if claimed != 0 && claimed != UInt(pthread_self()) {
            report(function: function, file: file, line: line)
        }
        #endif
    }

    /// A call made on a thread that does not own the state it touched.
    public struct Violation: Sendable, Equatable, CustomStringConvertible {
        public let owner: String
        public let function: String
        public let file: String
        public let line: UInt

        public var description: String {
            "\(file):\(line): \(function) ran off the \(owner) thread, which alone may touch the \(owner)'s state"
        }
    }

    /// Where violations go: nil is an assertion failure (the default).
    private static let handler = Mutex<(@Sendable (Violation) -> Void)?>(nil)

    /// Sends later violations to `handler` instead of failing an assertion (nil: back to the
    /// assertion).
    public static func reportViolations(to handler: (@Sendable (Violation) -> Void)?) {
        self.handler.withLock { $0 = handler }
    }

    /// The violations `body` causes, in order, instead of assertion failures: for tests that
    /// show a check firing.
    public static func violations(during body: () throws -> Void) rethrows -> [Violation] {
        let found = Locked<[Violation]>([])
        reportViolations { violation in found.withLock { $0.append(violation) } }
        defer { reportViolations(to: nil) }
        try body()
        return found.withLock { $0 }
    }

    @usableFromInline
    func report(function: StaticString, file: StaticString, line: UInt) {
        let violation = Violation(owner: name, function: "\(function)", file: "\(file)", line: line)
        if let handler = Self.handler.withLock({ $0 }) {
            handler(violation)
        } else {
            assertionFailure(violation.description)
        }
    }
}
