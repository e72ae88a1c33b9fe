import RChatCore

/// How fast each attachment on screen moves, measured by the view itself from the `done`
/// bytes it reads over time (the engine reports where a transfer is, not its speed). The
/// rate is the bytes moved between the oldest reading of the last `window` seconds and the
/// newest, over the time between them: smoothed, and none until two readings apart in time.
public struct TransferRates: Equatable, Sendable {
    public struct Reading: Equatable, Sendable {
        /// Monotonic seconds.
        public var at: Double
        public var done: UInt64
    }

    /// How far back the rate looks, in seconds.
    public static let window = 2.0

    private var readings: [MessageID: [Reading]] = [:]

    public init() {}

    /// `done` bytes of the message's file, read at `at`. A reading that goes back (a
    /// transfer started again) starts the measure over.
    public mutating func record(_ id: MessageID, done: UInt64, at: Double) {
        var list = readings[id] ?? []
        if let last = list.last, done < last.done { list = [] }
        if let last = list.last, last.at == at { list[list.count - 1].done = done } else { list.append(Reading(at: at, done: done)) }
        // Keep one reading at or before the window's start, so the span covers it whole.
        while list.count > 2, list[1].at <= at - Self.window { list.removeFirst() }
        readings[id] = list
    }

    /// Bytes per second, or nil until two readings were taken at different times.
    public func rate(of id: MessageID) -> Double? {
        guard let list = readings[id], let first = list.first, let last = list.last, last.at > first.at else { return nil }
        return Double(last.done - first.done) / (last.at - first.at)
    }

    /// Forgets every message not in `ids` (done, discarded, or no longer loaded).
    public mutating func keep(only ids: Set<MessageID>) {
        readings = readings.filter { ids.contains($0.key) }
    }

    public var isEmpty: Bool { readings.isEmpty }
}
