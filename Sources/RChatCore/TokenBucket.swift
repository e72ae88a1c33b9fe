/// A token bucket: at most `capacity` at once, refilled at `perSecond`. What it allows in any
/// stretch of `t` seconds is at most `capacity + perSecond × t`. Pure: the time is a value
/// (seconds on any monotonic scale) given with each call; a bucket never looks at a clock.
public struct TokenBucket: Sendable, Equatable {
    public let capacity: Double
    public let perSecond: Double
    public private(set) var tokens: Double
    private var updatedAt: Double

    /// Full at `now`.
    public init(capacity: Int, perSecond: Double, now: Double) {
        precondition(capacity >= 1 && perSecond > 0)
        self.capacity = Double(capacity)
        self.perSecond = perSecond
        tokens = Double(capacity)
        updatedAt = now
    }

    private mutating func refill(now: Double) {
        // A clock that went back (or an equal time) adds nothing and is not remembered.
        guard now > updatedAt else { return }
        tokens = min(capacity, tokens + (now - updatedAt) * perSecond)
        updatedAt = now
    }

    /// Takes one token if there is one; false (nothing taken) when the bucket is empty.
    public mutating func take(now: Double) -> Bool {
        refill(now: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Gives back a token taken in vain (when a second bucket said no).
    public mutating func refund() {
        tokens = min(capacity, tokens + 1)
    }

    /// Whether it would be full at `now`: forgetting it then changes nothing.
    public func isFull(at now: Double) -> Bool {
        tokens + max(0, now - updatedAt) * perSecond >= capacity
    }
}
