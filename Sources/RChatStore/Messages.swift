import RChatCore
import RChatSQL

extension StoreAccess {
    /// A message row with its status (NULL for incoming): prefix of every message query;
    /// the messages table is `m`.
    static var messageSelect: String {
        """
        SELECT m.rowid AS rowid, m.contact_id AS contact_id, m.id AS id, m.direction AS direction, m.content AS content,
               s.status AS status, m.resent AS resent, m.auto_resent_at AS auto_resent_at, m.created_at AS created_at,
               m.received_at AS received_at, m.read_at AS read_at, m.seq AS seq, m.keys_fingerprint AS keys_fingerprint,
               m.position AS position, m.expires_at AS expires_at
        FROM messages AS m LEFT JOIN message_status AS s ON s.message_rowid = m.rowid
        """
    }

    /// Stores a message this side wrote, as Sending, with its outbox row and the first step
    /// of its timeline — all three or none. Throws `duplicateMessage` if the id is taken.
    @discardableResult
    public func insertOutgoing(contact: ContactID, id: MessageID, content: MessageContent, at now: Int64,
                               seq: Int64? = nil, keysFingerprint: [UInt8]? = nil) throws -> MessageRowID {
        try atomically {
            let position = try nextPosition(contact: contact)
            try translatingConstraints(unique: .duplicateMessage(id), foreignKey: .unknownContact(contact)) {
                try database.execute("""
                    INSERT INTO messages (contact_id, id, direction, content, created_at, seq, keys_fingerprint, position)
                    VALUES (?, ?, 'out', ?, ?, ?, ?, ?)
                    """, [.integer(contact.rawValue), .blob(id.bytes), .blob(content.encoded()),
                          .integer(now), SQLValue(seq), SQLValue(keysFingerprint), .integer(position)])
            }
            let row = MessageRowID(database.lastInsertRowID)
            try indexForSearch([(row.rawValue, content)])
            try database.execute("INSERT INTO message_status (message_rowid, status) VALUES (?, ?)",
                                 [.integer(row.rawValue), .text(MessageStatus.sending.rawValue)])
            // Written by the user: asked for at its own place, below every row there now.
            try database.execute("INSERT INTO outbox (message_rowid, next_attempt_at, asked_at_position) VALUES (?, ?, ?)",
                                 [.integer(row.rawValue), .integer(now), .integer(position)])
            try appendStatusLog(row, .sending, at: now)
            return row
        }
    }

    /// Stores a message received from `contact`, once: a second copy of the same id (a
    /// resend that crossed the first) changes nothing and returns nil.
    /// An id recorded as undecryptable is struck off that list, since it is now read.
    @discardableResult
    public func insertIncoming(contact: ContactID, id: MessageID, content: MessageContent, at now: Int64,
                               sentAt: Int64? = nil, seq: Int64? = nil) throws -> MessageRowID? {
        try insertIncoming(contact: contact, [IncomingMessage(id: id, content: content, sentAt: sentAt ?? now, seq: seq)], at: now).first?.row
    }

    public func message(contact: ContactID, id: MessageID) throws -> StoredMessage? {
        try database.queryOne("\(Self.messageSelect) WHERE m.contact_id = ? AND m.id = ?",
                              [.integer(contact.rawValue), .blob(id.bytes)]).map(Self.decodeMessage)
    }

    public func message(_ row: MessageRowID) throws -> StoredMessage? {
        try database.queryOne("\(Self.messageSelect) WHERE m.rowid = ?",
                              [.integer(row.rawValue)]).map(Self.decodeMessage)
    }

    /// Outgoing messages written at or after `since`, oldest first (recovery looks at the
    /// last 72 hours).
    public func outgoingMessages(contact: ContactID, since: Int64) throws -> [StoredMessage] {
        try database.query("""
            \(Self.messageSelect)
            WHERE m.contact_id = ? AND m.direction = 'out' AND m.created_at >= ? ORDER BY m.position
            """, [.integer(contact.rawValue), .integer(since)]).map(Self.decodeMessage)
    }

    /// Marks every unread incoming message from `contact` as shown; returns their ids, for
    /// the Read receipts.
    public func markRead(contact: ContactID, at now: Int64) throws -> [MessageID] {
        try atomically {
            try database.query("""
                UPDATE messages SET read_at = ?
                WHERE contact_id = ? AND direction = 'in' AND read_at IS NULL
                RETURNING id
                """, [.integer(now), .integer(contact.rawValue)]).map { try $0.messageID("id", table: "messages") }
        }
    }

    public func unreadCount(contact: ContactID) throws -> Int {
        try database.queryOne("""
            SELECT count(*) FROM messages WHERE contact_id = ? AND direction = 'in' AND read_at IS NULL
            """, [.integer(contact.rawValue)])?.int(at: 0) ?? 0
    }

    /// How many messages to `contact` were sent again automatically since `since` (the
    /// 50-in-24-hours limit).
    public func autoResentCount(contact: ContactID, since: Int64) throws -> Int {
        try database.queryOne("SELECT count(*) FROM messages WHERE contact_id = ? AND auto_resent_at >= ?",
                              [.integer(contact.rawValue), .integer(since)])?.int(at: 0) ?? 0
    }

    static func decodeMessage(_ row: Row) throws -> StoredMessage {
        var message = StoredMessage(
            rowID: try row.messageRowID("rowid"), contact: try row.contactID("contact_id"),
            id: try row.messageID("id", table: "messages"),
            direction: try row.enumValue("direction", table: "messages", as: Direction.self),
            content: try row.content("content", table: "messages").content, status: try row.status("status", table: "messages"),
            isResent: try row.bool("resent"), autoResentAt: try row.optionalInt64("auto_resent_at"),
            createdAt: try row.int64("created_at"), receivedAt: try row.optionalInt64("received_at"),
            readAt: try row.optionalInt64("read_at"), seq: try row.optionalInt64("seq"),
            keysFingerprint: try row.optionalBlob("keys_fingerprint"), position: try row.int64("position"))
        message.expiresAt = try row.optionalInt64("expires_at")
        return message
    }
}

extension StoreAccess {
    /// Ids of the messages received from `contact` above `position`, in position order, with
    /// their positions (for a reader that follows a conversation as it grows).
    public func incomingMessageIDs(contact: ContactID, after position: Int64) throws -> [(id: MessageID, position: Int64)] {
        try database.query("""
            SELECT id, position FROM messages WHERE contact_id = ? AND direction = 'in' AND position > ? ORDER BY position
            """, [.integer(contact.rawValue), .integer(position)]).map { row in
            (try row.messageID("id", table: "messages"), try row.int64("position"))
        }
    }
}
