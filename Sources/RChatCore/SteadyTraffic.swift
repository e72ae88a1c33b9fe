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

    /// How many times shorter a slot is while a file goes (`transferSlotSeconds`): one chunk
    /// per slot, so a file moves at 25 chunks (about 1.5 MiB) a second at normal and 5 (about
    /// 300 KiB) at low, a steady stream rather than a burst at the link's speed.
    public static let transferSpeedUp = 50.0

    /// A slot's length while chunks of a file wait for slots: the mean divided by
    /// `transferSpeedUp`, ± 30 % as any slot. nil when off.
    public func transferSlotSeconds(uniform u: Double) -> Double? {
        slotSeconds(uniform: u).map { $0 / Self.transferSpeedUp }
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

    /// What a slot's end may carry, in the order the engine tries them: the first that goes
    /// fills the slot. Receipts (Delivered, Read, a whole file's, a file's progress) wait for
    /// a slot's end so that none follows a message by the few hundred milliseconds a reply
    /// takes, and go first: a status is late by one slot at most. A file's chunks go one per
    /// slot. A dummy only where nothing real went in the slot; a slot that carried a message
    /// still takes the receipt owed at its end (else a chatting side would hold them back).
    public static func slotFrames(_ waiting: SlotWaiting, slotUsed: Bool) -> [SlotFrame] {
        var frames: [SlotFrame] = []
        if waiting.receipts { frames.append(.receipt) }
        if waiting.chunks { frames.append(.chunk) }
        if !slotUsed { frames.append(.dummy) }
        return frames
    }
}

/// What a conversation has waiting for its next slot's end (steady traffic on).
public struct SlotWaiting: Equatable, Sendable {
    /// Receipts may be owed: the store says which at the slot's end.
    public var receipts: Bool
    /// Chunks of a file being sent may go: the outbox says which at the slot's end.
    public var chunks: Bool

    public init(receipts: Bool = false, chunks: Bool = false) {
        self.receipts = receipts
        self.chunks = chunks
    }
}

/// One frame at a slot's end.
public enum SlotFrame: Equatable, Sendable {
    case receipt
    case chunk
    case dummy
}
