import RChatCore
import RChatSQL

/// A message deleted because its timer ran out: what else must go with it, outside the store.
public struct ExpiredMessage: Equatable, Sendable {
    /// The conversation's id as a contact's (a direct conversation's contact).
    public let contact: ContactID
    public let id: MessageID
    /// Attachment files (relative to the home): the sent copy, the received file, partial files.
    public let files: [String]
    /// Desktop notifications raised for it, to close.
    public let notifications: [Int64]
}

extension StoreAccess {
    /// The conversation's timer and the change that set it (nil: never set).
    public func conversationTimer(_ conversation: ConversationID) throws -> (timer: DisappearingTimer, setBy: TimerPolicy.Change?) {
        try conversationTimer(conversation, unknown: .unknownConversation(conversation))
    }

    public func conversationTimer(contact: ContactID) throws -> (timer: DisappearingTimer, setBy: TimerPolicy.Change?) {
        try conversationTimer(contact.conversation, unknown: .unknownContact(contact))
    }

    private func conversationTimer(_ conversation: ConversationID,
                                   unknown: StoreError) throws -> (timer: DisappearingTimer, setBy: TimerPolicy.Change?) {
        guard let row = try database.queryOne("SELECT timer_seconds, timer_set_by, timer_counter FROM conversations WHERE id = ?",
                                              [.integer(conversation.rawValue)]) else { throw unknown }
        let seconds = try row.int64("timer_seconds")
        guard let timer = DisappearingTimer(rawValue: UInt32(clamping: seconds)), seconds >= 0 else {
            throw StoreError.malformedValue(table: "conversations", column: "timer_seconds", detail: "\(seconds) is not a timer")
        }
        let counter = try row.int64("timer_counter")
        guard counter >= 0, UInt64(counter) <= TimerPolicy.maximumCounter else {
            throw StoreError.malformedValue(table: "conversations", column: "timer_counter", detail: "\(counter) is not a counter")
        }
        let by = try row.optionalBlob("timer_set_by").map { bytes throws in
            guard let id = MessageID(bytes: bytes) else {
                throw StoreError.malformedValue(table: "conversations", column: "timer_set_by", detail: "not a 16-byte id")
            }
            return TimerPolicy.Change(counter: UInt64(counter), id: id)
        }
        return (timer, by)
    }

    /// Applies timer change `change`, if it replaces the one in force
    /// (`TimerPolicy.replaces`); returns whether it did.
    @discardableResult
    public func applyTimer(_ timer: DisappearingTimer, setBy change: TimerPolicy.Change, conversation: ConversationID) throws -> Bool {
        try applyTimer(timer, setBy: change, conversation, unknown: .unknownConversation(conversation))
    }

    @discardableResult
    public func applyTimer(_ timer: DisappearingTimer, setBy change: TimerPolicy.Change, contact: ContactID) throws -> Bool {
        try applyTimer(timer, setBy: change, contact.conversation, unknown: .unknownContact(contact))
    }

    private func applyTimer(_ timer: DisappearingTimer, setBy change: TimerPolicy.Change, _ conversation: ConversationID,
                            unknown: StoreError) throws -> Bool {
        try atomically {
            let current = try conversationTimer(conversation, unknown: unknown)
            guard TimerPolicy.replaces(change, current.setBy) else { return false }
            try database.execute("UPDATE conversations SET timer_seconds = ?, timer_set_by = ?, timer_counter = ? WHERE id = ?",
                                 [.integer(Int64(timer.rawValue)), .blob(change.id.bytes), .integer(Int64(change.counter)),
                                  .integer(conversation.rawValue)])
            return true
        }
    }

    /// The message goes with the timer `timer` (written with it; its clock starts later).
    public func setExpiry(message: MessageRowID, after timer: DisappearingTimer) throws {
        guard timer != .off else { return }
        try database.execute("UPDATE messages SET expires_after = ? WHERE rowid = ?", [.integer(Int64(timer.rawValue)), .integer(message.rawValue)])
    }

    public func setExpiry(contact: ContactID, ids: [MessageID], after timer: DisappearingTimer) throws {
        guard timer != .off else { return }
        try BatchSQL.forEachList(ids) { part in
            try database.execute("""
                UPDATE messages SET expires_after = ? WHERE conversation_id = ? AND id IN \(BatchSQL.inList)
                """, [.integer(Int64(timer.rawValue)), .integer(contact.rawValue)] + BatchSQL.padded(part.map { .blob($0.bytes) }))
        }
    }

    /// Starts the clocks of these messages (those with a timer whose clock has not started).
    public func startExpiry(messages: [MessageRowID], at now: Int64) throws {
        try BatchSQL.forEachList(messages) { part in
            try database.execute("""
                UPDATE messages SET expires_at = ? + expires_after
                WHERE expires_after IS NOT NULL AND expires_at IS NULL AND rowid IN \(BatchSQL.inList)
                """, [.integer(now)] + BatchSQL.padded(part.map { .integer($0.rawValue) }))
        }
    }

    public func startExpiry(conversation: ConversationID, ids: [MessageID], at now: Int64) throws {
        try BatchSQL.forEachList(ids) { part in
            try database.execute("""
                UPDATE messages SET expires_at = ? + expires_after
                WHERE expires_after IS NOT NULL AND expires_at IS NULL AND conversation_id = ? AND id IN \(BatchSQL.inList)
                """, [.integer(now), .integer(conversation.rawValue)] + BatchSQL.padded(part.map { .blob($0.bytes) }))
        }
    }

    public func startExpiry(contact: ContactID, ids: [MessageID], at now: Int64) throws {
        try startExpiry(conversation: contact.conversation, ids: ids, at: now)
    }

    /// Of `ids`, those of the conversation's messages deleted when their time ran out.
    public func expiredIDs(conversation: ConversationID, among ids: [MessageID]) throws -> Set<MessageID> {
        guard try database.queryOne("SELECT 1 FROM expired_messages WHERE conversation_id = ? LIMIT 1",
                                    [.integer(conversation.rawValue)]) != nil
        else { return [] }
        var out = Set<MessageID>()
        try BatchSQL.forEachList(ids) { part in
            for row in try database.query("SELECT id FROM expired_messages WHERE conversation_id = ? AND id IN \(BatchSQL.inList)",
                                          [.integer(conversation.rawValue)] + BatchSQL.padded(part.map { .blob($0.bytes) })) {
                out.insert(try row.messageID("id", table: "expired_messages"))
            }
        }
        return out
    }

    public func expiredIDs(contact: ContactID, among ids: [MessageID]) throws -> Set<MessageID> {
        try expiredIDs(conversation: contact.conversation, among: ids)
    }

    /// A message's deletion time, if its clock started.
    public func expiresAt(contact: ContactID, id: MessageID) throws -> Int64? {
        try database.queryOne("SELECT expires_at FROM messages WHERE conversation_id = ? AND id = ?",
                              [.integer(contact.rawValue), .blob(id.bytes)])?.optionalInt64("expires_at")
    }

    /// Deletes every message whose time ran out at `now`, with what goes with it in the
    /// store (status and timeline, outbox, attachment record, search entry, alerts), and
    /// returns what must go outside it. Call it with secure delete on (`Store.deletingExpired`).
    public func deleteExpired(at now: Int64, limit: Int = 1000) throws -> [ExpiredMessage] {
        try atomically {
            let rows = try database.query("""
                SELECT m.rowid, m.conversation_id, m.author_id, m.id, m.direction AS message_direction, m.position, m.read_owed,
                       a.file, a.work_file, a.direction
                FROM messages m LEFT JOIN attachments a ON a.message_rowid = m.rowid
                WHERE m.expires_at IS NOT NULL AND m.expires_at <= ? ORDER BY m.expires_at LIMIT ?
                """, [.integer(now), SQLValue(limit)])
            var expired: [ExpiredMessage] = []
            for row in rows {
                var files: [String] = []
                if let file = try row.optionalString("file") { files.append(file) }
                if let work = try row.optionalString("work_file") { files += [work, work + ".ahead"] }
                var notifications = try removeKeepingPlace(row, direction: "message_direction")
                // Its actions (reactions) go with it: nothing of them is shown without it.
                notifications += try retireActions(where: "conversation_id = ? AND target = ?",
                                                   [.integer(try row.int64("conversation_id")), .blob(try row.blob("id"))])
                expired.append(ExpiredMessage(contact: ContactID(try row.int64("conversation_id")), id: try row.messageID("id", table: "messages"),
                                              files: files, notifications: notifications))
            }
            return expired
        }
    }

    /// Deletes the message of `row` (its `rowid`, `conversation_id`, `author_id`, `id`,
    /// `position`, `read_owed` and, in the column `direction`, its direction) and its alerts,
    /// keeping its place in `expired_messages`: its id is not stored again, a receipt owed
    /// for it is still owed, and a conversation's positions are never used twice (its
    /// Delivered receipt marks and the view's count rely on it). Returns the desktop
    /// notifications raised for it, to close.
    func removeKeepingPlace(_ row: Row, direction column: String) throws -> [Int64] {
        let message = try row.int64("rowid")
        let notifications = try database.query("SELECT notification_id FROM alerts WHERE message_rowid = ? AND notification_id IS NOT NULL",
                                               [.integer(message)]).map { try $0.int64("notification_id") }
        try database.execute("DELETE FROM alerts WHERE message_rowid = ?", [.integer(message)])
        try database.execute("DELETE FROM messages WHERE rowid = ?", [.integer(message)])
        let incoming = try row.string(column) == Direction.incoming.rawValue
        try database.execute("""
            INSERT OR IGNORE INTO expired_messages (conversation_id, author_id, id, position, incoming, read_owed)
            VALUES (?, ?, ?, ?, ?, ?)
            """, [.integer(try row.int64("conversation_id")), SQLValue(try row.optionalInt64("author_id")), .blob(try row.blob("id")),
                  .integer(try row.int64("position")), SQLValue(incoming), .integer(incoming ? try row.int64("read_owed") : 0)])
        return notifications
    }
}
