import RChatCore
import RChatSQL

extension StoreAccess {
    /// A message row with its status (NULL for incoming): prefix of every message query;
    /// the messages table is `m`. The status and resend facts are those of the delivery to
    /// the member whose id the conversation has — a direct conversation's one delivery, found
    /// by its key; a group's message has none such, and `withSummaries` fills them in.
    static var messageSelect: String {
        """
        SELECT m.rowid AS rowid, m.conversation_id AS conversation_id, m.author_id AS author_id, m.id AS id,
               m.direction AS direction, m.content AS content, s.status AS status, coalesce(s.resent, 0) AS resent,
               s.auto_resent_at AS auto_resent_at, m.created_at AS created_at, m.received_at AS received_at,
               m.read_at AS read_at, m.seq AS seq, s.keys_fingerprint AS keys_fingerprint,
               m.position AS position, m.expires_at AS expires_at, m.current_text AS current_text
        FROM messages AS m LEFT JOIN message_status AS s ON s.message_rowid = m.rowid AND s.member_id = m.conversation_id
        """
    }

    /// Stores a message this side wrote in `conversation`, as Sending, with a delivery to each
    /// current member: its status row, outbox entry and the first step of its timeline — all
    /// or none. `keysFingerprints`: each member's pinned keys now ("keys unchanged since
    /// sent"). Throws `duplicateMessage` if the id is taken in the conversation.
    @discardableResult
    /// `to`: the members it goes to instead of the current ones (a group's change also goes to
    /// the member it removes).
    public func insertOutgoing(conversation: ConversationID, id: MessageID, content: MessageContent, at now: Int64,
                               seq: Int64? = nil, keysFingerprints: [ContactID: [UInt8]] = [:], to members: [ContactID]? = nil) throws -> MessageRowID {
        try insertOutgoing(conversation, id: id, content: content, at: now, seq: seq, keysFingerprints: keysFingerprints,
                           unknown: .unknownConversation(conversation), members: members)
    }

    /// The contact's direct conversation (`insertOutgoing(conversation:…)`).
    @discardableResult
    public func insertOutgoing(contact: ContactID, id: MessageID, content: MessageContent, at now: Int64,
                               seq: Int64? = nil, keysFingerprint: [UInt8]? = nil) throws -> MessageRowID {
        try insertOutgoing(contact.conversation, id: id, content: content, at: now, seq: seq,
                           keysFingerprints: keysFingerprint.map { [contact: $0] } ?? [:], unknown: .unknownContact(contact))
    }

    private func insertOutgoing(_ conversation: ConversationID, id: MessageID, content: MessageContent, at now: Int64,
                                seq: Int64?, keysFingerprints: [ContactID: [UInt8]], unknown: StoreError,
                                members: [ContactID]? = nil) throws -> MessageRowID {
        try atomically {
            let position = try nextPosition(conversation)
            try translatingConstraints(unique: .duplicateMessage(id), foreignKey: unknown) {
                try database.execute("""
                    INSERT INTO messages (conversation_id, id, direction, content, created_at, seq, position, target)
                    VALUES (?, ?, 'out', ?, ?, ?, ?, ?)
                    """, [.integer(conversation.rawValue), .blob(id.bytes), .blob(content.encoded()),
                          .integer(now), SQLValue(seq), .integer(position), SQLValue(content.actionTarget.map(\.bytes))])
            }
            let row = MessageRowID(database.lastInsertRowID)
            try indexForSearch([(row.rawValue, content)])
            for member in try members ?? currentMembers(conversation) {
                try translatingConstraints(foreignKey: unknown) {
                    try database.execute("INSERT INTO message_status (message_rowid, member_id, status, keys_fingerprint) VALUES (?, ?, ?, ?)",
                                         [.integer(row.rawValue), .integer(member.rawValue), .text(MessageStatus.sending.rawValue),
                                          SQLValue(keysFingerprints[member])])
                }
                // Written by the user: asked for at its own place, below every row there now.
                try database.execute("""
                    INSERT INTO outbox (message_rowid, member_id, next_attempt_at, asked_at_position) VALUES (?, ?, ?, ?)
                    """, [.integer(row.rawValue), .integer(member.rawValue), .integer(now), .integer(position)])
                try appendStatusLog(DeliveryKey(message: row, member: member), .sending, at: now)
            }
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

    public func message(conversation: ConversationID, id: MessageID) throws -> StoredMessage? {
        try database.queryOne("\(Self.messageSelect) WHERE m.conversation_id = ? AND m.id = ?",
                              [.integer(conversation.rawValue), .blob(id.bytes)]).map { try withSummary(try Self.decodeMessage($0)) }
    }

    public func message(contact: ContactID, id: MessageID) throws -> StoredMessage? {
        try message(conversation: contact.conversation, id: id)
    }

    /// The message `author` wrote with this id: in their direct conversation, else in a group
    /// (what names a message by id alone on their channel: a file's chunks).
    public func message(from author: ContactID, id: MessageID) throws -> StoredMessage? {
        if let direct = try message(contact: author, id: id) { return direct.direction == .incoming ? direct : nil }
        return try database.queryOne("""
            \(Self.messageSelect) WHERE m.id = ? AND m.conversation_id < 0 AND m.author_id = ?
            """, [.blob(id.bytes), .integer(author.rawValue)]).map { try withSummary(try Self.decodeMessage($0)) }
    }

    /// This side's message with this id that went to `member`: in their direct conversation,
    /// else in a group, with a delivery to them (what names a message by id alone on their
    /// channel: a file's progress, its refusal, its Delivered).
    public func message(to member: ContactID, id: MessageID) throws -> StoredMessage? {
        if let direct = try message(contact: member, id: id) { return direct.direction == .outgoing ? direct : nil }
        return try database.queryOne("""
            \(Self.messageSelect) WHERE m.id = ? AND m.conversation_id < 0 AND m.direction = 'out'
            AND EXISTS (SELECT 1 FROM message_status s WHERE s.message_rowid = m.rowid AND s.member_id = ?)
            """, [.blob(id.bytes), .integer(member.rawValue)]).map { try withSummary(try Self.decodeMessage($0)) }
    }

    /// Whether a message with this id is in a conversation other than `conversation` that
    /// this side shares with `contact` — their direct one, or a group: the only ids they can
    /// know. A reply of theirs that quotes one is dropped (a quote never reaches across).
    public func messageElsewhere(id: MessageID, than conversation: ConversationID, sharedWith contact: ContactID) throws -> Bool {
        if contact.conversation != conversation, try message(conversation: contact.conversation, id: id) != nil { return true }
        return try database.queryOne("""
            SELECT 1 FROM messages WHERE id = ? AND conversation_id < 0 AND conversation_id != ? LIMIT 1
            """, [.blob(id.bytes), .integer(conversation.rawValue)]) != nil
    }

    /// The actions of a conversation about any of `targets` (its reactions), in the order
    /// stored, each folded into its target by the read models.
    public func actions(conversation: ConversationID, targets: [MessageID]) throws -> [StoredMessage] {
        guard !targets.isEmpty, try actionCount(conversation) > 0 else { return [] }
        var out: [StoredMessage] = []
        try BatchSQL.forEachList(targets) { part in
            out += try withSummaries(try database.query("""
                \(Self.messageSelect) WHERE m.conversation_id = ? AND m.target IN \(BatchSQL.inList) ORDER BY m.position
                """, [.integer(conversation.rawValue)] + BatchSQL.padded(part.map { .blob($0.bytes) })).map(Self.decodeMessage))
        }
        return out
    }

    /// Actions of the conversation whose message it does not hold (still on its way):
    /// those stored before `cutoff` are deleted; how many are left.
    public func sweepWaitingActions(conversation: ConversationID, storedBefore cutoff: Int64) throws -> Int {
        guard try actionCount(conversation) > 0 else { return 0 }
        let waiting = """
            FROM messages AS a WHERE a.conversation_id = ?1 AND a.target IS NOT NULL AND a.direction = 'in'
              AND NOT EXISTS (SELECT 1 FROM messages AS t WHERE t.conversation_id = ?1 AND t.id = a.target)
            """
        try retireActions(where: "rowid IN (SELECT a.rowid \(waiting) AND a.received_at < ?2)",
                          [.integer(conversation.rawValue), .integer(cutoff)])
        return try database.queryOne("SELECT count(*) \(waiting)", [.integer(conversation.rawValue)])?.int(at: 0) ?? 0
    }

    /// Deletes the action rows that `condition` picks, each keeping its place
    /// (`removeKeepingPlace`; seed 555 stored a message where a deleted reaction had been,
    /// under a receipt mark already past it). Returns the notifications to close.
    @discardableResult
    func retireActions(where condition: String, _ args: [SQLValue]) throws -> [Int64] {
        try database.query("""
            SELECT rowid, conversation_id, author_id, id, position, direction, read_owed FROM messages
            WHERE target IS NOT NULL AND \(condition)
            """, args).flatMap { try removeKeepingPlace($0, direction: "direction") }
    }

    /// How many actions the conversation holds (an index count: `messages_actions`).
    func actionCount(_ conversation: ConversationID) throws -> Int {
        try database.queryOne("SELECT count(*) FROM messages WHERE conversation_id = ? AND target IS NOT NULL",
                              [.integer(conversation.rawValue)])?.int(at: 0) ?? 0
    }

    public func message(_ row: MessageRowID) throws -> StoredMessage? {
        try database.queryOne("\(Self.messageSelect) WHERE m.rowid = ?",
                              [.integer(row.rawValue)]).map { try withSummary(try Self.decodeMessage($0)) }
    }

    /// Outgoing messages written at or after `since`, oldest first (recovery looks at the
    /// last 72 hours).
    public func outgoingMessages(conversation: ConversationID, since: Int64) throws -> [StoredMessage] {
        try withSummaries(try database.query("""
            \(Self.messageSelect)
            WHERE m.conversation_id = ? AND m.direction = 'out' AND m.created_at >= ? ORDER BY m.position
            """, [.integer(conversation.rawValue), .integer(since)]).map(Self.decodeMessage))
    }

    public func outgoingMessages(contact: ContactID, since: Int64) throws -> [StoredMessage] {
        try outgoingMessages(conversation: contact.conversation, since: since)
    }

    /// What this side's messages in `conversation` queued for `member` carry (in the outbox
    /// for them, not yet taken by the relay: they go at the next flush), oldest first: a
    /// group's changes about to go to them are not handed again. One the relay took is not
    /// counted: it may have been lost, or not read there (a member who lost the session it
    /// was sealed in), and a sync must still hand it.
    public func contentsOnTheirWay(conversation: ConversationID, to member: ContactID) throws -> [MessageContent] {
        try database.query("""
            SELECT m.content AS content FROM outbox AS o JOIN messages AS m ON m.rowid = o.message_rowid
            WHERE o.member_id = ? AND m.conversation_id = ? AND m.direction = 'out'
            ORDER BY m.position
            """, [.integer(member.rawValue), .integer(conversation.rawValue)]).map { try $0.content("content", table: "messages").content }
    }

    /// This side's messages with a delivery to `member` that shows Sent or Not confirmed
    /// (what may not have reached someone who started over), in their direct conversation
    /// and in every group, each with that delivery: their conversation's first, then by
    /// position.
    public func outgoingDeliveries(to member: ContactID) throws -> [(message: StoredMessage, delivery: StoredDelivery)] {
        let rows = try database.query("""
            SELECT m.rowid FROM message_status AS s JOIN messages AS m ON m.rowid = s.message_rowid
            WHERE s.member_id = ? AND m.direction = 'out' AND (s.status = 'Sent' OR s.status = 'Not confirmed')
            ORDER BY m.conversation_id DESC, m.position
            """, [.integer(member.rawValue)]).map { try $0.messageRowID("rowid") }
        return try rows.compactMap { row in
            guard let m = try message(row), let d = try deliveries(message: row).first(where: { $0.member == member }) else { return nil }
            return (m, d)
        }
    }

    /// Marks every unread incoming message in the conversation as shown; returns their ids,
    /// for the Read receipts.
    public func markRead(conversation: ConversationID, at now: Int64) throws -> [MessageID] {
        try atomically {
            try database.query("""
                UPDATE messages SET read_at = ?
                WHERE conversation_id = ? AND direction = 'in' AND read_at IS NULL
                RETURNING id
                """, [.integer(now), .integer(conversation.rawValue)]).map { try $0.messageID("id", table: "messages") }
        }
    }

    public func markRead(contact: ContactID, at now: Int64) throws -> [MessageID] {
        try markRead(conversation: contact.conversation, at: now)
    }

    public func unreadCount(conversation: ConversationID) throws -> Int {
        try database.queryOne("""
            SELECT count(*) FROM messages WHERE conversation_id = ? AND direction = 'in' AND read_at IS NULL AND target IS NULL
            """, [.integer(conversation.rawValue)])?.int(at: 0) ?? 0
    }

    public func unreadCount(contact: ContactID) throws -> Int { try unreadCount(conversation: contact.conversation) }

    /// How many deliveries to `contact` (in any conversation) were sent again automatically
    /// since `since` (the 50-in-24-hours limit is the contact's).
    public func autoResentCount(contact: ContactID, since: Int64) throws -> Int {
        try database.queryOne("SELECT count(*) FROM message_status WHERE member_id = ? AND auto_resent_at >= ?",
                              [.integer(contact.rawValue), .integer(since)])?.int(at: 0) ?? 0
    }

    static func decodeMessage(_ row: Row) throws -> StoredMessage {
        var message = StoredMessage(
            rowID: try row.messageRowID("rowid"), contact: try row.contactID("conversation_id"),
            id: try row.messageID("id", table: "messages"),
            direction: try row.enumValue("direction", table: "messages", as: Direction.self),
            content: try row.content("content", table: "messages").content, status: try row.status("status", table: "message_status"),
            isResent: try row.bool("resent"), autoResentAt: try row.optionalInt64("auto_resent_at"),
            createdAt: try row.int64("created_at"), receivedAt: try row.optionalInt64("received_at"),
            readAt: try row.optionalInt64("read_at"), seq: try row.optionalInt64("seq"),
            keysFingerprint: try row.optionalBlob("keys_fingerprint"), position: try row.int64("position"))
        message.expiresAt = try row.optionalInt64("expires_at")
        message.author = try row.optionalInt64("author_id").map(ContactID.init)
        message.currentText = try row.optionalString("current_text")
        return message
    }

    /// A group's outgoing messages with what they show (`DeliverySummary` over their
    /// deliveries); a direct conversation's read theirs with the row already.
    func withSummaries(_ messages: [StoredMessage]) throws -> [StoredMessage] {
        guard messages.contains(where: { $0.isOutgoing && $0.conversation.isGroup }) else { return messages }
        return try messages.map(withSummary)
    }

    func withSummary(_ message: StoredMessage) throws -> StoredMessage {
        guard message.isOutgoing, message.conversation.isGroup else { return message }
        var shown = message
        let all = try deliveries(message: message.rowID)
        shown.status = Self.summary(of: all).shown
        shown.isResent = all.contains(where: \.isResent)
        shown.autoResentAt = all.compactMap(\.autoResentAt).max()
        return shown
    }
}

// MARK: deliveries

extension StoreAccess {
    /// The message's deliveries, one per member it was written to, by member.
    public func deliveries(message: MessageRowID) throws -> [StoredDelivery] {
        try database.query("""
            SELECT s.member_id AS member_id, s.status AS status, s.resent AS resent, s.auto_resent_at AS auto_resent_at,
                   s.keys_fingerprint AS keys_fingerprint, coalesce(c.state = 'current', 0) AS current
            FROM message_status AS s JOIN messages AS m ON m.rowid = s.message_rowid
            LEFT JOIN conversation_members AS c ON c.conversation_id = m.conversation_id AND c.contact_id = s.member_id
            WHERE s.message_rowid = ? ORDER BY s.member_id
            """, [.integer(message.rawValue)]).map { row in
            guard let status = try row.status("status", table: "message_status") else {
                throw StoreError.malformedValue(table: "message_status", column: "status", detail: "NULL")
            }
            return StoredDelivery(key: DeliveryKey(message: message, member: try row.contactID("member_id")), status: status,
                                  isResent: try row.bool("resent"), autoResentAt: try row.optionalInt64("auto_resent_at"),
                                  keysFingerprint: try row.optionalBlob("keys_fingerprint"), isCurrent: try row.bool("current"))
        }
    }

    /// What the message shows from its deliveries and how many are at each status: over the
    /// current members' (over every delivery when no member it went to is current any more).
    public func deliverySummary(message: MessageRowID) throws -> DeliverySummary {
        Self.summary(of: try deliveries(message: message))
    }

    static func summary(of deliveries: [StoredDelivery]) -> DeliverySummary {
        let current = deliveries.filter(\.isCurrent)
        return DeliverySummary((current.isEmpty ? deliveries : current).map(\.status))
    }
}

extension StoreAccess {
    /// Ids of the messages received in the conversation above `position`, in position order,
    /// with their positions (for a reader that follows a conversation as it grows).
    public func incomingMessageIDs(conversation: ConversationID, after position: Int64) throws -> [(id: MessageID, position: Int64)] {
        try database.query("""
            SELECT id, position FROM messages WHERE conversation_id = ? AND direction = 'in' AND position > ? ORDER BY position
            """, [.integer(conversation.rawValue), .integer(position)]).map { row in
            (try row.messageID("id", table: "messages"), try row.int64("position"))
        }
    }

    public func incomingMessageIDs(contact: ContactID, after position: Int64) throws -> [(id: MessageID, position: Int64)] {
        try incomingMessageIDs(conversation: contact.conversation, after: position)
    }
}
