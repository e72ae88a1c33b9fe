import RChatCore

/// A message as stored.
public struct StoredMessage: Equatable, Sendable {
    public let rowID: MessageRowID
    /// The conversation's id as a contact's: in a direct conversation, the contact (see
    /// `conversation` and `author` for a group's).
    public let contact: ContactID
    public let id: MessageID
    public let direction: Direction
    public let content: MessageContent
    /// Outgoing only; nil for incoming. What it shows: `DeliverySummary` over its deliveries
    /// to current members (in a direct conversation, its one delivery's status).
    public internal(set) var status: MessageStatus?
    /// Sent again (by the user's Resend or automatically), to any member.
    public internal(set) var isResent: Bool
    /// When it was last sent again automatically (the `Resent` marker); nil if never.
    public internal(set) var autoResentAt: Int64?
    /// Outgoing: when written here. Incoming: when the sender says it was written (the time
    /// received, when the envelope carries none).
    public let createdAt: Int64
    /// Incoming: when stored here.
    public let receivedAt: Int64?
    /// Incoming: when it was on screen (Read receipts follow).
    public let readAt: Int64?
    /// The sender's sequence number, when known.
    public let seq: Int64?
    /// The contact's pinned keys when it was sent, so recovery can check "keys unchanged"
    /// (a direct conversation's; each delivery of a group's has its own, `deliveries`).
    public let keysFingerprint: [UInt8]?
    /// Its place in the conversation (see `conversation(contact:limit:before:)`).
    public let position: Int64
    /// When it disappears, unix seconds: its timer's clock started (nil: no timer, or not yet).
    public var expiresAt: Int64? = nil
    /// Its conversation.
    public var conversation: ConversationID { ContactID(contact.rawValue).conversation }
    /// Who wrote it: nil for this side, else the contact.
    public var author: ContactID? = nil

    /// A text message's (or reply's) text in force after its edits; nil: never edited.
    public var currentText: String? = nil

    public var isOutgoing: Bool { direction == .outgoing }

    /// What it shows now: its content, with the text its latest edit gave it (`EditPolicy`).
    public var currentContent: MessageContent {
        guard let text = currentText else { return content }
        switch content {
        case .text: return .text(text)
        case .reply(var reply):
            reply.text = text
            return .reply(reply)
        default: return content
        }
    }
}

/// One step of a message's timeline.
public struct StatusLogEntry: Equatable, Sendable {
    public let status: MessageStatus
    public let at: Int64
}

/// The outcome of a compare-and-raise on one delivery's status (in a direct conversation,
/// the message's).
public struct StatusChange: Equatable, Sendable {
    public let message: MessageRowID
    public let id: MessageID
    /// The member whose delivery it is.
    public var member: ContactID { delivery.member }
    public let delivery: DeliveryKey
    public let previous: MessageStatus
    /// The status it has now (equal to `previous` when the event changed nothing).
    public let current: MessageStatus

    public var changed: Bool { previous != current }
}

/// One delivery of an outgoing message: to one member, with the facts recovery decides by.
public struct StoredDelivery: Equatable, Sendable {
    public let key: DeliveryKey
    public let status: MessageStatus
    /// Sent again to this member (by hand or automatically).
    public let isResent: Bool
    /// When it was sent again automatically to this member; nil if never.
    public let autoResentAt: Int64?
    /// The member's pinned keys when it was sent to them.
    public let keysFingerprint: [UInt8]?
    /// The member is current in the conversation (counted in what the message shows).
    public let isCurrent: Bool

    public var member: ContactID { key.member }
}
