/// What an outgoing message shows, from its deliveries: one per member it was written to
/// (docs/DESIGN.md §15). Pure: the store reads the deliveries, this decides.
///
/// The message shows the lowest status among its current members' deliveries: never more
/// than every member proved (Delivered only once every one stored it; Read once every one
/// showed it), and a delivery in trouble is seen whatever the others reached. "Lowest" is
/// `rank`, a total order:
///
///     Failed to send < Not delivered < Not confirmed < Sending < Sent < Delivered < Read
///
/// The failures come first, most serious first: Failed to send never left this machine
/// for that member (nothing will arrive unless it is resent); Not delivered arrived and
/// could not be read there (nothing will arrive unless it is resent); Not confirmed may
/// have been taken by the relay, which never said so (a Sending whose acknowledgement is
/// late, so below Sending). The rest is the order a message moves in.
///
/// For a direct conversation there is one delivery, and what the message shows is its
/// status, as it always was.
public struct DeliverySummary: Equatable, Sendable {
    /// What the message shows; nil when it has no delivery (an incoming message).
    public let shown: MessageStatus?
    /// How many deliveries are at each status (statuses with none are absent).
    public let counts: [MessageStatus: Int]

    /// `statuses`: those of the deliveries to the conversation's current members, in any order.
    public init<S: Sequence>(_ statuses: S) where S.Element == MessageStatus {
        var counts: [MessageStatus: Int] = [:]
        var lowest: MessageStatus?
        for status in statuses {
            counts[status, default: 0] += 1
            if lowest.map({ Self.rank(status) < Self.rank($0) }) ?? true { lowest = status }
        }
        self.shown = lowest
        self.counts = counts
    }

    /// How many deliveries there are.
    public var total: Int { counts.values.reduce(0, +) }

    /// How many deliveries are at `status`.
    public func count(_ status: MessageStatus) -> Int { counts[status] ?? 0 }

    /// The order "lowest" follows (see the type's comment): 0 is the lowest.
    public static func rank(_ status: MessageStatus) -> Int {
        switch status {
        case .failedToSend: 0
        case .notDelivered: 1
        case .notConfirmed: 2
        case .sending: 3
        case .sent: 4
        case .delivered: 5
        case .read: 6
        }
    }
}
