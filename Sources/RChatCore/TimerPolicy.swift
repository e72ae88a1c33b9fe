/// Disappearing messages, as pure rules (the store applies them as compare-and-set).
public enum TimerPolicy {
    /// A timer change's place in the order both sides agree on: a logical counter (Lamport:
    /// the writer's greatest counter seen in the conversation + 1), ties broken by the control
    /// item's id. No wall clock takes part, so a contact whose clock is years ahead cannot pin
    /// the timer. A change from an rChat before counters carries counter 0 (ordered among
    /// such changes by id, the old rule; every change with a counter comes after it).
    public struct Change: Equatable, Sendable, CustomStringConvertible {
        public let counter: UInt64
        public let id: MessageID

        public init(counter: UInt64, id: MessageID) {
            self.counter = counter
            self.id = id
        }

        public var description: String { "\(counter)/\(id.hex)" }
    }

    /// The greatest counter a change may carry; one above it is refused as not decoding
    /// (`MessageContent`), so that `next` never overflows the store's integer.
    public static let maximumCounter: UInt64 = 1 << 62

    /// Whether change `candidate` replaces the one in force, `current` (nil: never set).
    /// Both sides apply every change they see with this rule, so they end on the same timer
    /// whatever the order they saw them in: the greater counter wins, ties broken by id.
    public static func replaces(_ candidate: Change, _ current: Change?) -> Bool {
        guard let current else { return true }
        if candidate.counter != current.counter { return candidate.counter > current.counter }
        return candidate.id != current.id && current.id.bytes.lexicographicallyPrecedes(candidate.id.bytes)
    }

    /// The counter of a new change made here when `current` is in force: one more than every
    /// counter seen, so it replaces `current` (`replaces`). Nil when the counter is spent (a
    /// contact sent the greatest one): no change can be made then, and none is reported.
    public static func next(after current: Change?) -> UInt64? {
        let seen = current?.counter ?? 0
        return seen < maximumCounter ? seen + 1 : nil
    }

    /// How far past the greatest counter seen a contact's change may go. An honest one is
    /// at most one past every change it saw, so only changes lost on the way put it further;
    /// a contact that sends one further (to spend the counters, so that no change here can
    /// come after it) is refused. Reaching `maximumCounter` takes 2^46 messages then.
    public static let maximumStep: UInt64 = 1 << 16

    /// Whether a contact's change with `counter` is believable when `current` is in force.
    public static func isBelievable(_ counter: UInt64, after current: Change?) -> Bool {
        counter <= (current?.counter ?? 0) + maximumStep
    }

    /// When a message whose clock started at `start` is deleted.
    public static func expiry(start: Int64, after timer: DisappearingTimer) -> Int64? {
        timer == .off ? nil : start + Int64(timer.rawValue)
    }
}
