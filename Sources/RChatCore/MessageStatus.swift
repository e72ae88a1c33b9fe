/// What an outgoing message's status says, in the words the view shows (README, "Statuses").
public enum MessageStatus: String, CaseIterable, Sendable, Codable {
    case sending = "Sending"
    case sent = "Sent"
    case delivered = "Delivered"
    case read = "Read"
    case notDelivered = "Not delivered"
    case notConfirmed = "Not confirmed"
    case failedToSend = "Failed to send"

    /// Delivered and Read are proven by the peer's receipt: nothing may lower them.
    public var isFinal: Bool { self == .delivered || self == .read }

    /// The user may send it again (Resend): it may not have arrived.
    public var offersResend: Bool { self == .notDelivered || self == .notConfirmed || self == .failedToSend }
}

/// Something that happened to an outgoing message.
public enum StatusEvent: String, CaseIterable, Sendable {
    /// The relay acknowledged the frame (forwarded or held).
    case relayAcknowledged
    /// The relay's acknowledgement did not come in time.
    case acknowledgementTimedOut
    /// The peer's encrypted receipt: stored there.
    case deliveredReceipt
    /// The peer's encrypted receipt: shown there.
    case readReceipt
    /// The peer reported, in a signed notice, that it could not read it.
    case peerCouldNotRead
    /// Sent again, by the user's Resend or automatically; it is on its way once more.
    case resending
    /// Given up before the relay took it (blocked contact, keys refused).
    case gaveUp
}

public enum StatusLattice {
    /// The one rule for every status change. Delivered and Read are never lowered; a
    /// receipt always wins because it is proof; nothing else can undo a proof.
    public static func raise(_ current: MessageStatus, _ event: StatusEvent) -> MessageStatus {
        switch (current, event) {
        case (.read, _):
            return .read
        case (_, .readReceipt):
            return .read
        case (.delivered, _):
            return .delivered
        case (_, .deliveredReceipt):
            return .delivered

        case (.sending, .relayAcknowledged), (.notConfirmed, .relayAcknowledged):
            return .sent
        case (_, .relayAcknowledged):
            // A late ack of an earlier copy says nothing new about Sent, Not delivered or
            // Failed to send.
            return current

        case (.sending, .acknowledgementTimedOut):
            return .notConfirmed
        case (_, .acknowledgementTimedOut):
            return current

        case (.sending, .peerCouldNotRead), (.sent, .peerCouldNotRead), (.notConfirmed, .peerCouldNotRead):
            return .notDelivered
        case (_, .peerCouldNotRead):
            return current

        case (_, .resending):
            return .sending

        case (.sending, .gaveUp):
            return .failedToSend
        case (_, .gaveUp):
            // Not confirmed stays: the relay may have taken it, so "gave up before the relay
            // took it" would not be proven.
            return current
        }
    }

    /// Whether going from `old` to `new` is a change the lattice could ever make.
    /// The store refuses any other write.
    public static func permits(from old: MessageStatus, to new: MessageStatus) -> Bool {
        old == new || StatusEvent.allCases.contains { raise(old, $0) == new }
    }
}
