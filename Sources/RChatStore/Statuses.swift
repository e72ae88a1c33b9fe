import RChatCore
import RChatSQL

/// Status changes: a compare-and-raise through `StatusLattice`, never a plain write.
extension StoreAccess {
    /// Applies `event` to the outgoing message `id` to `contact`: reads its status, asks
    /// `StatusLattice.raise`, and writes (with a timeline entry) only if that changed it —
    /// all under one write lock, so two receipts racing cannot lower each other.
    /// nil when there is no such outgoing message.
    @discardableResult
    public func raiseStatus(contact: ContactID, id: MessageID, event: StatusEvent, at now: Int64) throws -> StatusChange? {
        try atomically {
            guard let row = try database.queryOne("""
                SELECT rowid FROM messages WHERE contact_id = ? AND id = ? AND direction = 'out'
                """, [.integer(contact.rawValue), .blob(id.bytes)]) else { return nil }
            return try raise(try row.messageRowID("rowid"), event, at: now)
        }
    }

    /// The same, by message row.
    @discardableResult
    public func raiseStatus(message: MessageRowID, event: StatusEvent, at now: Int64) throws -> StatusChange? {
        try atomically { try raise(message, event, at: now) }
    }

    /// The user's Resend, or an automatic one: the status goes back to Sending (unless a
    /// receipt already proved it arrived), the message is marked sent again, and it goes
    /// back into the outbox, unchanged, with the same id.
    @discardableResult
    public func queueResend(contact: ContactID, id: MessageID, automatically: Bool, at now: Int64) throws -> StatusChange? {
        try atomically {
            guard let change = try raiseStatus(contact: contact, id: id, event: .resending, at: now) else { return nil }
            guard change.current == .sending else { return change }
            try database.execute("""
                UPDATE messages SET resent = CASE WHEN ?1 THEN 1 ELSE resent END,
                                    auto_resent_at = CASE WHEN ?1 THEN ?2 ELSE auto_resent_at END
                WHERE rowid = ?3
                """, [SQLValue(automatically), .integer(now), .integer(change.message.rawValue)])
            // By hand: asked for now, below every row the conversation has (SendPolicy.Origin).
            let asked: Int64? = automatically ? nil : try nextPosition(contact: contact)
            try database.execute("""
                INSERT INTO outbox (message_rowid, next_attempt_at, asked_at_position) VALUES (?, ?, ?)
                ON CONFLICT (message_rowid) DO UPDATE SET next_attempt_at = excluded.next_attempt_at, sent_in_session = NULL,
                    asked_at_position = excluded.asked_at_position
                """, [.integer(change.message.rawValue), .integer(now), SQLValue(asked)])
            // A file goes again whole: the other side drops the chunks it has.
            try restartSending(message: change.message)
            try withdrawSettledResendOffers(contact: contact, touched: [id])
            return change
        }
    }

    /// Every status the message reached, in order, with its time.
    public func statusLog(message: MessageRowID) throws -> [StatusLogEntry] {
        try database.query("SELECT status, at FROM status_log WHERE message_rowid = ? ORDER BY rowid",
                           [.integer(message.rawValue)]).map { row in
            guard let status = try row.status("status", table: "status_log") else {
                throw StoreError.malformedValue(table: "status_log", column: "status", detail: "NULL")
            }
            return StatusLogEntry(status: status, at: try row.int64("at"))
        }
    }

    /// Call inside a transaction.
    private func raise(_ message: MessageRowID, _ event: StatusEvent, at now: Int64) throws -> StatusChange? {
        guard let row = try database.queryOne("""
            SELECT m.id AS id, s.status AS status FROM message_status AS s JOIN messages AS m ON m.rowid = s.message_rowid
            WHERE s.message_rowid = ?
            """, [.integer(message.rawValue)]) else { return nil }
        let id = try row.messageID("id", table: "messages")
        guard let current = try row.status("status", table: "message_status") else {
            throw StoreError.malformedValue(table: "message_status", column: "status", detail: "NULL")
        }
        let next = StatusLattice.raise(current, event)
        if next != current {
            // The status read is part of the WHERE: a compare-and-set, even without the lock.
            try database.execute("UPDATE message_status SET status = ? WHERE message_rowid = ? AND status = ?",
                                 [.text(next.rawValue), .integer(message.rawValue), .text(current.rawValue)])
            guard database.changes == 1 else { throw StoreError.unknownMessage(message) }
            try appendStatusLog(message, next, at: now)
        }
        return StatusChange(message: message, id: id, previous: current, current: next)
    }

    func appendStatusLog(_ message: MessageRowID, _ status: MessageStatus, at now: Int64) throws {
        try database.execute("INSERT INTO status_log (message_rowid, status, at) VALUES (?, ?, ?)",
                             [.integer(message.rawValue), .text(status.rawValue), .integer(now)])
    }
}
