import RChatCore
import RChatSQL

/// Status changes: a compare-and-raise through `StatusLattice` on one delivery (an outgoing
/// message's to one member), never a plain write, and never touching another delivery.
extension StoreAccess {
    /// Applies `event` to the delivery to `member` of the outgoing message `id` in
    /// `conversation`: reads its status, asks `StatusLattice.raise`, and writes (with a
    /// timeline entry) only if that changed it — all under one write lock, so two receipts
    /// racing cannot lower each other. nil when there is no such delivery.
    @discardableResult
    public func raiseDelivery(conversation: ConversationID, member: ContactID, id: MessageID, event: StatusEvent,
                              at now: Int64) throws -> StatusChange? {
        try atomically {
            guard let row = try database.queryOne("""
                SELECT rowid FROM messages WHERE conversation_id = ? AND id = ? AND direction = 'out'
                """, [.integer(conversation.rawValue), .blob(id.bytes)]) else { return nil }
            return try raise(DeliveryKey(message: try row.messageRowID("rowid"), member: member), event, at: now)
        }
    }

    /// The same, by delivery.
    @discardableResult
    public func raiseDelivery(_ delivery: DeliveryKey, event: StatusEvent, at now: Int64) throws -> StatusChange? {
        try atomically { try raise(delivery, event, at: now) }
    }

    /// The contact's direct conversation: its message's one delivery (`raiseDelivery`).
    @discardableResult
    public func raiseStatus(contact: ContactID, id: MessageID, event: StatusEvent, at now: Int64) throws -> StatusChange? {
        try raiseDelivery(conversation: contact.conversation, member: contact, id: id, event: event, at: now)
    }

    /// A direct conversation's message, by row: its one delivery.
    @discardableResult
    public func raiseStatus(message: MessageRowID, event: StatusEvent, at now: Int64) throws -> StatusChange? {
        try atomically {
            guard let member = try directMember(of: message) else { return nil }
            return try raise(DeliveryKey(message: message, member: member), event, at: now)
        }
    }

    /// The user's Resend, or an automatic one, to one member: the delivery's status goes back
    /// to Sending (unless a receipt already proved it arrived), it is marked sent again, and
    /// it goes back into the outbox, unchanged, with the same id.
    @discardableResult
    public func queueResend(conversation: ConversationID, member: ContactID, id: MessageID, automatically: Bool,
                            at now: Int64) throws -> StatusChange? {
        try atomically {
            guard let change = try raiseDelivery(conversation: conversation, member: member, id: id, event: .resending, at: now)
            else { return nil }
            guard change.current == .sending else { return change }
            try database.execute("""
                UPDATE message_status SET resent = CASE WHEN ?1 THEN 1 ELSE resent END,
                                          auto_resent_at = CASE WHEN ?1 THEN ?2 ELSE auto_resent_at END
                WHERE message_rowid = ?3 AND member_id = ?4
                """, [SQLValue(automatically), .integer(now), .integer(change.message.rawValue), .integer(member.rawValue)])
            // By hand: asked for now, below every row the conversation has (SendPolicy.Origin).
            let asked: Int64? = automatically ? nil : try nextPosition(conversation)
            try database.execute("""
                INSERT INTO outbox (message_rowid, member_id, next_attempt_at, asked_at_position) VALUES (?, ?, ?, ?)
                ON CONFLICT (message_rowid, member_id) DO UPDATE SET next_attempt_at = excluded.next_attempt_at,
                    sent_in_session = NULL, asked_at_position = excluded.asked_at_position
                """, [.integer(change.message.rawValue), .integer(member.rawValue), .integer(now), SQLValue(asked)])
            // A file goes again whole: the other side drops the chunks it has.
            try restartSending(DeliveryKey(message: change.message, member: member))
            try withdrawSettledResendOffers(conversation: conversation, touched: [id])
            return change
        }
    }

    /// The contact's direct conversation (`queueResend(conversation:member:…)`).
    @discardableResult
    public func queueResend(contact: ContactID, id: MessageID, automatically: Bool, at now: Int64) throws -> StatusChange? {
        try queueResend(conversation: contact.conversation, member: contact, id: id, automatically: automatically, at: now)
    }

    /// Every status the delivery reached, in order, with its time.
    public func statusLog(_ delivery: DeliveryKey) throws -> [StatusLogEntry] {
        try database.query("SELECT status, at FROM status_log WHERE message_rowid = ? AND member_id = ? ORDER BY rowid",
                           [.integer(delivery.message.rawValue), .integer(delivery.member.rawValue)]).map(Self.decodeLogEntry)
    }

    /// A direct conversation's message: its one delivery's timeline.
    public func statusLog(message: MessageRowID) throws -> [StatusLogEntry] {
        guard let member = try directMember(of: message) else { return [] }
        return try statusLog(DeliveryKey(message: message, member: member))
    }

    /// The member of a direct conversation's message: the contact whose id the conversation
    /// has (nil: no such message, or a group's).
    func directMember(of message: MessageRowID) throws -> ContactID? {
        guard let row = try database.queryOne("SELECT conversation_id FROM messages WHERE rowid = ?", [.integer(message.rawValue)])
        else { return nil }
        let conversation = try row.int64("conversation_id")
        return conversation > 0 ? ContactID(conversation) : nil
    }

    private static func decodeLogEntry(_ row: Row) throws -> StatusLogEntry {
        guard let status = try row.status("status", table: "status_log") else {
            throw StoreError.malformedValue(table: "status_log", column: "status", detail: "NULL")
        }
        return StatusLogEntry(status: status, at: try row.int64("at"))
    }

    /// Call inside a transaction.
    private func raise(_ delivery: DeliveryKey, _ event: StatusEvent, at now: Int64) throws -> StatusChange? {
        guard let row = try database.queryOne("""
            SELECT m.id AS id, s.status AS status FROM message_status AS s JOIN messages AS m ON m.rowid = s.message_rowid
            WHERE s.message_rowid = ? AND s.member_id = ?
            """, [.integer(delivery.message.rawValue), .integer(delivery.member.rawValue)]) else { return nil }
        let id = try row.messageID("id", table: "messages")
        guard let current = try row.status("status", table: "message_status") else {
            throw StoreError.malformedValue(table: "message_status", column: "status", detail: "NULL")
        }
        let next = StatusLattice.raise(current, event)
        if next != current {
            // The status read is part of the WHERE: a compare-and-set, even without the lock.
            try database.execute("UPDATE message_status SET status = ? WHERE message_rowid = ? AND member_id = ? AND status = ?",
                                 [.text(next.rawValue), .integer(delivery.message.rawValue), .integer(delivery.member.rawValue),
                                  .text(current.rawValue)])
            guard database.changes == 1 else { throw StoreError.unknownMessage(delivery.message) }
            try appendStatusLog(delivery, next, at: now)
        }
        return StatusChange(message: delivery.message, id: id, delivery: delivery, previous: current, current: next)
    }

    func appendStatusLog(_ delivery: DeliveryKey, _ status: MessageStatus, at now: Int64) throws {
        try database.execute("INSERT INTO status_log (message_rowid, member_id, status, at) VALUES (?, ?, ?, ?)",
                             [.integer(delivery.message.rawValue), .integer(delivery.member.rawValue), .text(status.rawValue),
                              .integer(now)])
    }
}
