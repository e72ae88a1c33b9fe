import RChatCore
import RChatSQL

/// A delivery waiting for the relay to take it: an outgoing message, to one member.
public struct OutboxItem: Equatable, Sendable {
    public let message: MessageRowID
    /// The member it goes to, through their pairwise channel (in a direct conversation, the
    /// contact whose id the conversation has).
    public let contact: ContactID
    public let conversation: ConversationID
    public let id: MessageID
    public let content: MessageContent
    /// `content` as stored: what the envelope carries, taken as it is.
    public let encodedContent: [UInt8]
    public let seq: Int64?
    public let createdAt: Int64
    public let attempts: Int
    public let nextAttemptAt: Int64
    /// The session it was last sent in, if any: a new session sends it again.
    public let sentInSession: [UInt8]?
    /// The disappearing timer it was written with, in seconds (nil: none): it travels with it.
    public let expiresAfter: UInt32?
    /// Who put it on its way: the user (and the conversation position when they asked), or
    /// rChat itself (an automatic resend).
    public let origin: SendPolicy.Origin
    /// The group's id in its log, for a group's message: it travels as a group message.
    public let groupID: [UInt8]?
    /// For a group's message, the heads of this side's log now (`StoredGroup.heads`): they
    /// travel with it.
    public var groupHeads: [UInt8] = []

    public var delivery: DeliveryKey { DeliveryKey(message: message, member: contact) }
}

/// The durable send queue, a row per delivery. A message enters it with `insertOutgoing`
/// (same transaction; a row per member) or `queueResend` (that member's), and each delivery
/// leaves it when the relay acknowledges it.
extension StoreAccess {
    // CROSS JOIN keeps the outbox (small) as the outer loop, instead of walking a long
    // conversation to find the few messages still queued.
    private static var outboxSelect: String {
        """
        SELECT o.message_rowid, o.member_id, m.conversation_id, m.id, m.content, m.seq, m.created_at,
               o.attempts, o.next_attempt_at, o.sent_in_session, m.expires_after, o.asked_at_position, g.group_id, g.heads AS group_heads
        FROM outbox o CROSS JOIN messages m ON m.rowid = o.message_rowid
        LEFT JOIN groups g ON m.conversation_id < 0 AND g.conversation_id = m.conversation_id
        """
    }

    /// Deliveries whose next attempt is due at `now`, earliest first.
    public func dueOutbox(at now: Int64, limit: Int = 100) throws -> [OutboxItem] {
        try database.query("\(Self.outboxSelect) WHERE o.next_attempt_at <= ? ORDER BY o.next_attempt_at, o.message_rowid, o.member_id LIMIT ?",
                           [.integer(now), SQLValue(limit)]).map(Self.decodeOutboxItem)
    }

    /// Everything queued to go through `contact`'s channel (to them, in every conversation:
    /// their direct conversation's first), in the order written (sent when a session opens).
    public func outbox(contact: ContactID) throws -> [OutboxItem] {
        try database.query("\(Self.outboxSelect) WHERE o.member_id = ? ORDER BY m.conversation_id DESC, m.position",
                           [.integer(contact.rawValue)]).map(Self.decodeOutboxItem)
    }

    /// Everything queued in `conversation`, to every member, in the order written.
    public func outbox(conversation: ConversationID) throws -> [OutboxItem] {
        try database.query("\(Self.outboxSelect) WHERE m.conversation_id = ? ORDER BY m.position, o.member_id",
                           [.integer(conversation.rawValue)]).map(Self.decodeOutboxItem)
    }

    /// The delivery's outbox entry, if it is queued.
    public func outboxItem(_ delivery: DeliveryKey) throws -> OutboxItem? {
        try database.queryOne("\(Self.outboxSelect) WHERE o.message_rowid = ? AND o.member_id = ?",
                              [.integer(delivery.message.rawValue), .integer(delivery.member.rawValue)]).map(Self.decodeOutboxItem)
    }

    /// A direct conversation's message: its one delivery's entry.
    public func outboxItem(message: MessageRowID) throws -> OutboxItem? {
        try database.queryOne("\(Self.outboxSelect) WHERE o.message_rowid = ? AND o.member_id = m.conversation_id",
                              [.integer(message.rawValue)]).map(Self.decodeOutboxItem)
    }

    /// Records that the delivery went out in `session`; it stays queued until acknowledged.
    public func recordSendAttempt(_ delivery: DeliveryKey, session: [UInt8]?, nextAttemptAt: Int64) throws {
        try database.execute("""
            UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, sent_in_session = ?
            WHERE message_rowid = ? AND member_id = ?
            """, [.integer(nextAttemptAt), SQLValue(session), .integer(delivery.message.rawValue), .integer(delivery.member.rawValue)])
        guard database.changes == 1 else { throw StoreError.unknownMessage(delivery.message) }
    }

    /// A direct conversation's message: its one delivery (`recordSendAttempt(_:…)`).
    public func recordSendAttempt(message: MessageRowID, session: [UInt8]?, nextAttemptAt: Int64) throws {
        try database.execute("""
            UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?1, sent_in_session = ?2
            WHERE message_rowid = ?3 AND member_id = (SELECT conversation_id FROM messages WHERE rowid = ?3)
            """, [.integer(nextAttemptAt), SQLValue(session), .integer(message.rawValue)])
        guard database.changes == 1 else { throw StoreError.unknownMessage(message) }
    }

    /// A backoff cut short: the delivery is due at `at` (room freed where it was refused).
    public func attemptNow(_ delivery: DeliveryKey, at: Int64) throws {
        try database.execute("UPDATE outbox SET next_attempt_at = ? WHERE message_rowid = ? AND member_id = ? AND next_attempt_at > ?",
                             [.integer(at), .integer(delivery.message.rawValue), .integer(delivery.member.rawValue), .integer(at)])
    }

    /// A direct conversation's message: its one delivery (`attemptNow(_:at:)`).
    public func attemptNow(message: MessageRowID, at: Int64) throws {
        try database.execute("""
            UPDATE outbox SET next_attempt_at = ?1
            WHERE message_rowid = ?2 AND member_id = (SELECT conversation_id FROM messages WHERE rowid = ?2) AND next_attempt_at > ?1
            """, [.integer(at), .integer(message.rawValue)])
    }

    /// Takes the delivery out of the queue (the relay acknowledged it, or it was given up).
    /// Returns false if it was not queued.
    @discardableResult
    public func removeFromOutbox(_ delivery: DeliveryKey) throws -> Bool {
        try database.execute("DELETE FROM outbox WHERE message_rowid = ? AND member_id = ?",
                             [.integer(delivery.message.rawValue), .integer(delivery.member.rawValue)])
        return database.changes == 1
    }

    /// Nothing more may go for these deliveries (their member blocked, deleted or with
    /// refused keys; their group blocked): each is Failed to send (`StatusLattice`: what was
    /// sent keeps its status) and leaves the queue. Returns the changes.
    public func giveUp(_ deliveries: [DeliveryKey], at now: Int64) throws -> [StatusChange] {
        try atomically {
            let changes = try raiseDeliveries(deliveries, event: .gaveUp, at: now)
            for delivery in deliveries { _ = try removeFromOutbox(delivery) }
            return changes
        }
    }

    /// A direct conversation's message: its one delivery (`removeFromOutbox(_:)`).
    @discardableResult
    public func removeFromOutbox(message: MessageRowID) throws -> Bool {
        try database.execute("""
            DELETE FROM outbox WHERE message_rowid = ?1 AND member_id = (SELECT conversation_id FROM messages WHERE rowid = ?1)
            """, [.integer(message.rawValue)])
        return database.changes == 1
    }

    static func decodeOutboxItem(_ row: Row) throws -> OutboxItem {
        let (content, encoded) = try row.content("content", table: "messages")
        return OutboxItem(message: try row.messageRowID("message_rowid"), contact: try row.contactID("member_id"),
                   conversation: ConversationID(try row.int64("conversation_id")),
                   id: try row.messageID("id", table: "messages"), content: content, encodedContent: encoded,
                   seq: try row.optionalInt64("seq"), createdAt: try row.int64("created_at"),
                   attempts: try row.int("attempts"), nextAttemptAt: try row.int64("next_attempt_at"),
                   sentInSession: try row.optionalBlob("sent_in_session"),
                   expiresAfter: try row.optionalInt64("expires_after").map { UInt32(clamping: $0) },
                   origin: try row.optionalInt64("asked_at_position").map { .byHand(askedAt: $0) } ?? .automatic,
                   groupID: try row.optionalBlob("group_id"), groupHeads: try row.optionalBlob("group_heads") ?? [])
    }
}
