/// What arrives together alerts together, as one check does (grouped by contact, one summary
/// after five): arrivals are held until a quarter second passes without one, at most two
/// seconds from the first. Times are seconds on any one clock.
public struct AlertBurst<Item>: Sendable where Item: Sendable {
    public static var quiet: Double { 0.25 }
    public static var longest: Double { 2.0 }

    public private(set) var items: [Item] = []
    private var first: Double?
    private var last: Double?

    public init() {}

    public var isEmpty: Bool { items.isEmpty }

    public mutating func add(_ new: [Item], at now: Double) {
        guard !new.isEmpty else { return }
        items += new
        first = first ?? now
        last = now
    }

    /// When what waits is due if nothing more arrives; nil when nothing waits.
    public var due: Double? {
        guard let first, let last else { return nil }
        return min(last + Self.quiet, first + Self.longest)
    }

    /// What waits, taken, once it is due at `now`; else nothing.
    public mutating func takeDue(at now: Double) -> [Item] {
        guard let due, now >= due else { return [] }
        return takeAll()
    }

    /// What waits, taken, due or not.
    public mutating func takeAll() -> [Item] {
        defer { self = AlertBurst() }
        return items
    }
}
