import RChatCore

/// A message as stored.
public struct StoredMessage: Equatable, Sendable {
    public let rowID: MessageRowID
    public let contact: ContactID
    public let id: MessageID
    public let direction: Direction
    public let content: MessageContent
    /// Outgoing only; nil for incoming.
    public let status: MessageStatus?
    /// Sent again (by the user's Resend or automatically).
    public let isResent: Bool
    /// When it was sent again automatically (the `Resent` marker); nil if never.
    public let autoResentAt: Int64?
    /// Outgoing: when written here. Incoming: when the sender says it was written (the time
    /// received, when the envelope carries none).
    public let createdAt: Int64
    /// Incoming: when stored here.
    public let receivedAt: Int64?
    /// Incoming: when it was on screen (Read receipts follow).
    public let readAt: Int64?
    /// The sender's sequence number, when known.
    public let seq: Int64?
    /// The contact's pinned keys when it was sent, so recovery can check "keys unchanged".
    public let keysFingerprint: [UInt8]?
    /// Its place in the conversation (see `conversation(contact:limit:before:)`).
    public let position: Int64
    /// When it disappears, unix seconds: its timer's clock started (nil: no timer, or not yet).
    public var expiresAt: Int64? = nil

    public var isOutgoing: Bool { direction == .outgoing }
}

/// One step of a message's timeline.
public struct StatusLogEntry: Equatable, Sendable {
    public let status: MessageStatus
    public let at: Int64
}

/// The outcome of a compare-and-raise on an outgoing message's status.
public struct StatusChange: Equatable, Sendable {
    public let message: MessageRowID
    public let id: MessageID
    public let previous: MessageStatus
    /// The status it has now (equal to `previous` when the event changed nothing).
    public let current: MessageStatus

    public var changed: Bool { previous != current }
}
