import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where the engine's timers read the time: seconds on a clock that never goes back and
/// means nothing as a date (acknowledgement timeouts, the receipt window, backoff, the outbox
/// sweep, keepalives). Message times use the wall `Clock` instead. Tests and the simulation
/// inject a virtual one (docs/ARCHITECTURE.md, "Time and transport").
public protocol MonotonicClock: Sendable {
    /// Seconds since an arbitrary origin of this clock.
    func seconds() -> Double
}

/// The machine's monotonic clock (`CLOCK_MONOTONIC`).
public struct SystemMonotonicClock: MonotonicClock {
    public init() {}

    public func seconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }
}
