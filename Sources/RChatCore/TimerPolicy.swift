/// Disappearing messages, as pure rules (the store applies them as compare-and-set).
public enum TimerPolicy {
    /// Whether a timer change made by control item `candidate` replaces the one set by
    /// `current` (nil: never set). Both sides apply every change they see with this rule, so
    /// they end on the same timer whatever the order: the later change by its writer's
    /// clock wins (an id begins with the milliseconds it was made at), ties broken by id.
    public static func replaces(_ candidate: MessageID, _ current: MessageID?) -> Bool {
        guard let current else { return true }
        return candidate.bytes.lexicographicallyPrecedes(current.bytes) == false && candidate != current
    }

    /// When a message whose clock started at `start` is deleted.
    public static func expiry(start: Int64, after timer: DisappearingTimer) -> Int64? {
        timer == .off ? nil : start + Int64(timer.rawValue)
    }
}
