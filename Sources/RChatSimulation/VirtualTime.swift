import RChatCore
import Synchronization

/// Virtual time for the simulation: events run in time order (ties in the order they were
/// scheduled), and nothing happens between them. One thread drives it.
final class Scheduler: @unchecked Sendable {
    // @unchecked: one thread drives a simulation; engines reach it through their dialer and
    // durability, on that thread.
    private struct Event {
        let time: Double
        let order: UInt64
        let action: () -> Void
    }

    let clock: VirtualClock
    private var heap: [Event] = []
    private var scheduled: UInt64 = 0

    init(clock: VirtualClock) { self.clock = clock }

    var now: Double { clock.seconds() }

    func after(_ seconds: Double, _ action: @escaping () -> Void) {
        at(now + max(0, seconds), action)
    }

    func at(_ time: Double, _ action: @escaping () -> Void) {
        scheduled += 1
        heap.append(Event(time: max(time, now), order: scheduled, action: action))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// When the next event is due (nil: none).
    var nextTime: Double? { heap.first?.time }

    /// Runs the next event due at or before `limit`, moving the clock to its time; false if none is.
    func runNext(notAfter limit: Double) -> Bool {
        guard let first = heap.first, first.time <= limit else { return false }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var best = parent
                if left < heap.count, Self.before(heap[left], heap[best]) { best = left }
                if right < heap.count, Self.before(heap[right], heap[best]) { best = right }
                if best == parent { break }
                heap.swapAt(parent, best)
                parent = best
            }
        }
        // Late events (after a jump) run at the jump's time: the clock never goes back.
        if first.time > now { clock.set(first.time) }
        first.action()
        return true
    }

    /// Moves the clock forward to `time`; events due before it run late, at `time`.
    func advance(to time: Double) { if time > now { clock.set(time) } }

    private static func before(_ a: Event, _ b: Event) -> Bool {
        a.time < b.time || (a.time == b.time && a.order < b.order)
    }
}

/// The simulation's clock: monotonic seconds since the run began, and wall time from a fixed
/// epoch plus those seconds (message times, the 72-hour and 24-hour limits).
public final class VirtualClock: Clock, MonotonicClock, Sendable {
    /// 2027-01-15 08:00:00 UTC: every run starts at the same wall time.
    public static let epoch: Int64 = 1_800_000_000
    private let elapsed = Mutex<Double>(0)

    public init() {}

    public func seconds() -> Double { elapsed.withLock { $0 } }
    public func now() -> Int64 { Self.epoch + Int64(seconds()) }
    public func nowMilliseconds() -> Int64 { Self.epoch * 1000 + Int64(seconds() * 1000) }

    func set(_ value: Double) { elapsed.withLock { $0 = value } }
}

/// xoshiro256** seeded through SplitMix64: the simulation's choices, the same for the same seed.
public struct SimulationRandom: RandomNumberGenerator {
    private var s: (UInt64, UInt64, UInt64, UInt64)

    public init(seed: UInt64) {
        var x = seed
        func splitMix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s = (splitMix(), splitMix(), splitMix(), splitMix())
    }

    public mutating func next() -> UInt64 {
        let result = rotate(s.1 &* 5, 7) &* 9
        let t = s.1 << 17
        s.2 ^= s.0
        s.3 ^= s.1
        s.1 ^= s.2
        s.0 ^= s.3
        s.2 ^= t
        s.3 = rotate(s.3, 45)
        return result
    }

    private func rotate(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }
    mutating func uniform(_ range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &self) }
    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &self)] }
}

/// The world's clock, but the milliseconds new ids begin with are `offset` seconds off (a
/// device whose clock is wrong, as far as the order of ids goes; its seconds, which statuses
/// and the outbox are timed by, stay the world's).
struct SkewedClock: Clock {
    let base: VirtualClock
    let offset: Int64

    init(_ base: VirtualClock, by offset: Int64) {
        self.base = base
        self.offset = offset
    }

    func now() -> Int64 { base.now() }
    func nowMilliseconds() -> Int64 { base.nowMilliseconds() + offset * 1000 }
}
