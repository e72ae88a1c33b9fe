import RChatCore
import RChatSQL

/// What a message deleted for everyone leaves to remove outside the store.
public struct UnsentMessage: Equatable, Sendable {
    /// Attachment files (relative to the home): the sent copy, the received file, partial files.
    public let files: [String]
    /// Desktop notifications raised for it (and for its reactions), to close.
    public let notifications: [Int64]

    public init(files: [String], notifications: [Int64]) {
        self.files = files
        self.notifications = notifications
    }
}

// Edits and delete for everyone (schema step 23, `SchemaEdits`).
extension StoreAccess {
    /// Sets the text in force of a text message (or reply) — nil: its own again — and gives
    /// the search index the change: the old text's entry out, the new one's in, so search
    /// finds the current text only. Anything else has no text to set; nothing changes.
    public func setCurrentText(_ text: String?, message: MessageRowID) throws {
        try atomically {
            guard let row = try database.queryOne("SELECT content, current_text FROM messages WHERE rowid = ?", [.integer(message.rawValue)]),
                  let written = try row.content("content", table: "messages").content.writtenText else { return }
            let stored = try row.optionalString("current_text")
            let indexed = stored ?? written
            let now = text ?? written
            guard stored != text else { return }
            try database.execute("INSERT INTO message_search (message_search, rowid, text) VALUES ('delete', ?, ?)",
                                 [.integer(message.rawValue), .text(indexed)])
            try database.execute("UPDATE messages SET current_text = ? WHERE rowid = ?", [SQLValue(text), .integer(message.rawValue)])
            try database.execute("INSERT INTO message_search (rowid, text) VALUES (?, ?)", [.integer(message.rawValue), .text(now)])
        }
    }

    /// Deletes a message for everyone, keeping its place: its content becomes
    /// `MessageContent.unsent` (its row, statuses, timeline and receipts stay, so nothing is
    /// shown twice and Delivered/Read never move), and with secure delete on, so the space its
    /// text leaves is zeroed, everything else of it goes — its search entry, its edits and
    /// reactions (each keeping its place), its attachment's record and queued chunks, its
    /// alerts. What of it is still queued stays queued: the deleted mark goes in its place
    /// (and with Resend), so its statuses still end where they are proven, and a member it
    /// had not reached stores only the mark. Returns what must go outside the store. The caller
    /// merges the index and truncates the log after the commit (`Store.scrubDeleted`).
    @discardableResult
    public func unsend(message: MessageRowID) throws -> UnsentMessage {
        try atomically {
            let previous = try database.queryOne("PRAGMA secure_delete")?.int64(at: 0) ?? 0
            try database.execute("PRAGMA secure_delete = ON")
            defer { try? database.execute("PRAGMA secure_delete = \(previous == 2 ? "FAST" : String(previous))") }
            guard let row = try database.queryOne("""
                SELECT m.conversation_id, m.id, m.content, m.current_text, a.file, a.work_file
                FROM messages AS m LEFT JOIN attachments AS a ON a.message_rowid = m.rowid WHERE m.rowid = ?
                """, [.integer(message.rawValue)]) else { return UnsentMessage(files: [], notifications: []) }
            let content = try row.content("content", table: "messages").content
            if content == .unsent { return UnsentMessage(files: [], notifications: []) }
            var files: [String] = []
            if let file = try row.optionalString("file") { files.append(file) }
            if let work = try row.optionalString("work_file") { files += [work, work + ".ahead"] }
            if let written = content.writtenText {
                try database.execute("INSERT INTO message_search (message_search, rowid, text) VALUES ('delete', ?, ?)",
                                     [.integer(message.rawValue), .text(try row.optionalString("current_text") ?? written)])
            }
            var notifications = try database.query("SELECT notification_id FROM alerts WHERE message_rowid = ? AND notification_id IS NOT NULL",
                                                   [.integer(message.rawValue)]).map { try $0.int64("notification_id") }
            try database.execute("DELETE FROM alerts WHERE message_rowid = ?", [.integer(message.rawValue)])
            try database.execute("DELETE FROM attachment_sends WHERE message_rowid = ?", [.integer(message.rawValue)])
            try database.execute("DELETE FROM attachments WHERE message_rowid = ?", [.integer(message.rawValue)])
            try database.execute("UPDATE messages SET content = x'05', current_text = NULL WHERE rowid = ?", [.integer(message.rawValue)])
            // Its edits hold its earlier texts, its reactions are about what is gone: they go
            // too. The delete itself stays (its deliveries and status are the delete's).
            notifications += try retireActions(where: "conversation_id = ? AND target = ? AND substr(content, 1, 2) != x'0305'",
                                               [.integer(try row.int64("conversation_id")), .blob(try row.blob("id"))])
            return UnsentMessage(files: files, notifications: notifications)
        }
    }

    /// Whether the conversation's message `id` was deleted for everyone.
    public func isUnsent(conversation: ConversationID, id: MessageID) throws -> Bool {
        try database.queryOne("SELECT 1 FROM messages WHERE conversation_id = ? AND id = ? AND content = x'05'",
                              [.integer(conversation.rawValue), .blob(id.bytes)]) != nil
    }
}

extension Store {
    /// After a commit that deleted messages for everyone (`unsend`): the search index merged,
    /// so no word of theirs stays in its older segments, then the log checkpointed and
    /// truncated, so no frame that held their text stays in `rchat.db-wal` — with secure
    /// delete on, so the pages the merge frees are zeroed.
    public func scrubDeleted() throws {
        let previous = try database.queryOne("PRAGMA secure_delete")?.int64(at: 0) ?? 0
        try database.execute("PRAGMA secure_delete = ON")
        defer { try? database.execute("PRAGMA secure_delete = \(previous == 2 ? "FAST" : String(previous))") }
        try database.execute("INSERT INTO message_search (message_search) VALUES ('optimize')")
        try truncateLog()
    }
}

extension StoreAccess {
    /// Deletes one action row that may not do what it says (an edit from someone else, a
    /// delete past its window, a reaction to a deleted message), keeping its place. Returns
    /// the notifications to close.
    @discardableResult
    public func retireAction(_ row: MessageRowID) throws -> [Int64] {
        try retireActions(where: "rowid = ?", [.integer(row.rawValue)])
    }
}
