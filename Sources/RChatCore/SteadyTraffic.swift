import Foundation

/// How much traffic a client makes so that the relay cannot tell chatting from quiet
/// (`rchat settings steady-traffic`): while a conversation's session is open, each side
/// sends one frame per slot — a real one if it had any, else a dummy — and while connected
/// to its own relay a client sends cover frames to its own mailbox at random intervals with
/// the same mean.
public enum SteadyTraffic: String, CaseIterable, Sendable {
    case off
    case low
    case normal

    public static let `default` = SteadyTraffic.normal

    /// The mean slot length, and the mean time between cover frames, in seconds; nil when off.
    public var meanSeconds: Double? {
        switch self {
        case .off: nil
        case .low: 10
        case .normal: 2
        }
    }

    /// How far a slot's length strays from the mean, either way, as a share of it.
    public static let jitter = 0.3

    /// A slot's length for a uniform draw `u` in [0, 1): the mean ± 30 %, uniformly.
    /// nil when off.
    public func slotSeconds(uniform u: Double) -> Double? {
        meanSeconds.map { $0 * (1 - Self.jitter + 2 * Self.jitter * min(max(u, 0), 1)) }
    }

    /// The wait before the next cover frame for a uniform draw `u` in [0, 1): exponential with
    /// the slot's mean (a Poisson process: when the last one went says nothing about the
    /// next), capped at ten means so that a draw near 1 never silences cover for long.
    /// nil when off.
    public func coverSeconds(uniform u: Double) -> Double? {
        meanSeconds.map { mean in min(-mean * log(1 - min(max(u, 0), 0.999_999)), 10 * mean) }
    }
}

/// A conversation's slot clock for steady traffic: between sessions there is none; while a
/// session is open, the current slot's end and whether a real frame went in it.
public enum SteadyPace: Equatable, Sendable {
    case stopped
    case slot(endsAt: Double, used: Bool)

    /// A real frame went on the link: the current slot needs no dummy.
    public mutating func used() {
        if case .slot(let end, _) = self { self = .slot(endsAt: end, used: true) }
    }

    /// What to do at time `now`: nothing (the slot runs, or the pace is stopped) or the slot
    /// ended — with `sendDummy` when nothing real went in it — and the next slot of
    /// `nextLength` seconds starts. A slot missed by more than its length (the engine was
    /// busy or asleep) starts afresh from `now` rather than sending a burst of dummies.
    public mutating func tick(now: Double, nextLength: () -> Double) -> (slotEnded: Bool, sendDummy: Bool) {
        guard case .slot(let end, let used) = self, end <= now else { return (false, false) }
        let length = nextLength()
        self = .slot(endsAt: end + length > now ? end + length : now + length, used: false)
        return (true, !used)
    }

    public var endsAt: Double? {
        if case .slot(let end, _) = self { return end }
        return nil
    }
}
