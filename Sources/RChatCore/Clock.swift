import Foundation
import Synchronization

/// Where "now" comes from. Policies take the time as a value; only the edges ask a clock.
public protocol Clock: Sendable {
    /// Seconds since 1970, as the product counts time.
    func now() -> Int64
    /// Milliseconds since 1970 (message ids carry them).
    func nowMilliseconds() -> Int64
}

extension Clock {
    public func nowMilliseconds() -> Int64 { now() * 1000 }
}

/// The wall clock, or `RCHAT_FAKE_NOW` (unix seconds) when set — for tests only, so that
/// 72-hour and 24-hour limits can be crossed without waiting.
public struct SystemClock: Clock {
    private let fixed: Int64?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        fixed = environment["RCHAT_FAKE_NOW"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
    }

    public func now() -> Int64 {
        fixed ?? Int64(Date().timeIntervalSince1970)
    }

    public func nowMilliseconds() -> Int64 {
        fixed.map { $0 * 1000 } ?? Int64(Date().timeIntervalSince1970 * 1000)
    }

    /// Whether a fake time is in force (logged by the programs so nobody is fooled by it).
    public var isFake: Bool { fixed != nil }
}

/// A clock a test sets by hand.
public final class ManualClock: Clock, Sendable {
    private let value: Atomic<Int64>

    public init(_ value: Int64) { self.value = Atomic(value) }

    public func now() -> Int64 { value.load(ordering: .acquiring) }
    public func set(_ newValue: Int64) { value.store(newValue, ordering: .releasing) }
    public func advance(_ seconds: Int64) { value.add(seconds, ordering: .acquiringAndReleasing) }
}
