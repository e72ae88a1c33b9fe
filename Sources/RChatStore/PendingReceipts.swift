import RChatCore
import RChatSQL

/// An incoming message whose Delivered receipt is owed, with its place in the conversation:
/// the mark that moves to it once the relay takes the receipt.
public struct OwedDelivered: Equatable, Sendable {
    public let id: MessageID
    public let position: Int64

    public init(id: MessageID, position: Int64) {
        self.id = id
        self.position = position
    }
}

/// Receipts owed to authors, durable until the relay takes them: a mark per (conversation,
/// author), in `conversation_members`.
///
/// Delivered: owed for every message the author wrote in the conversation after the mark
/// (`delivered_receipted_through`), so storing a message owes its receipt in the same write,
/// with nothing more written. Read: a flag on the message (`read_owed`), set in the
/// transaction that marks it shown; it is owed to the message's author.
extension StoreAccess {
    /// Delivered receipts owed to `author` for what they wrote in `conversation`, oldest
    /// first: their messages after the mark and after `position` (what this run already
    /// sent, nil: nothing).
    public func deliveredReceiptsOwed(conversation: ConversationID, author: ContactID, after position: Int64?,
                                      limit: Int) throws -> [OwedDelivered] {
        // A message that disappeared before its receipt went still owes it (expired_messages).
        try database.query("""
            WITH mark AS (SELECT delivered_receipted_through AS through, last_incoming_position AS last FROM conversation_members
                          WHERE conversation_id = ?1 AND contact_id = ?4)
            SELECT id, position FROM messages
            WHERE conversation_id = ?1 AND direction = 'in' AND author_id = ?4
              AND position > max(?2, (SELECT through FROM mark)) AND position <= (SELECT last FROM mark)
            UNION ALL
            SELECT id, position FROM expired_messages
            WHERE conversation_id = ?1 AND author_id = ?4
              AND position > max(?2, (SELECT through FROM mark)) AND position <= (SELECT last FROM mark)
            ORDER BY position LIMIT ?3
            """, [.integer(conversation.rawValue), .integer(position ?? 0), .integer(Int64(limit)), .integer(author.rawValue)]).map { row in
            OwedDelivered(id: try row.messageID("id", table: "messages"), position: try row.int64("position"))
        }
    }

    /// The contact's direct conversation (`deliveredReceiptsOwed(conversation:author:…)`).
    public func deliveredReceiptsOwed(contact: ContactID, after position: Int64?, limit: Int) throws -> [OwedDelivered] {
        try deliveredReceiptsOwed(conversation: contact.conversation, author: contact, after: position, limit: limit)
    }

    /// How far the relay has taken Delivered receipts for `author`'s messages in `conversation`.
    public func deliveredReceiptedThrough(conversation: ConversationID, author: ContactID) throws -> Int64 {
        try database.queryOne("SELECT delivered_receipted_through FROM conversation_members WHERE conversation_id = ? AND contact_id = ?",
                              [.integer(conversation.rawValue), .integer(author.rawValue)])?.int64(at: 0) ?? 0
    }

    public func deliveredReceiptedThrough(contact: ContactID) throws -> Int64 {
        try deliveredReceiptedThrough(conversation: contact.conversation, author: contact)
    }

    /// The relay took Delivered receipts for every message of `author` in `conversation` up
    /// to `position`. The mark only moves forward.
    public func settleDeliveredReceipts(conversation: ConversationID, author: ContactID, through position: Int64) throws {
        try database.execute("""
            UPDATE conversation_members SET delivered_receipted_through = ?3
            WHERE conversation_id = ?1 AND contact_id = ?2 AND delivered_receipted_through < ?3
            """, [.integer(conversation.rawValue), .integer(author.rawValue), .integer(position)])
    }

    public func settleDeliveredReceipts(contact: ContactID, through position: Int64) throws {
        try settleDeliveredReceipts(conversation: contact.conversation, author: contact, through: position)
    }

    /// Owes the authors a Read receipt for `ids` (messages in `conversation`). Call it in the
    /// transaction that marks them shown, so a receipt is never owed for what is not true. A
    /// file not yet whole here owes none: Read would say it arrived (`completeReceiving` owes
    /// it once it is whole).
    public func oweReadReceipts(conversation: ConversationID, ids: [MessageID]) throws {
        try setReadOwed(true, conversation: conversation, ids: ids)
    }

    public func oweReadReceipts(contact: ContactID, ids: [MessageID]) throws {
        try oweReadReceipts(conversation: contact.conversation, ids: ids)
    }

    /// The Read receipts owed to `author` in `conversation`, oldest first.
    public func readReceiptsOwed(conversation: ConversationID, author: ContactID, limit: Int) throws -> [MessageID] {
        try database.query("""
            SELECT id, position FROM messages WHERE conversation_id = ?1 AND read_owed = 1 AND author_id = ?3
            UNION ALL
            SELECT id, position FROM expired_messages WHERE conversation_id = ?1 AND read_owed = 1 AND author_id = ?3
            ORDER BY position LIMIT ?2
            """, [.integer(conversation.rawValue), .integer(Int64(limit)), .integer(author.rawValue)]).map {
            try $0.messageID("id", table: "messages")
        }
    }

    public func readReceiptsOwed(contact: ContactID, limit: Int) throws -> [MessageID] {
        try readReceiptsOwed(conversation: contact.conversation, author: contact, limit: limit)
    }

    /// The relay took the Read receipt frame carrying these (messages in `conversation`).
    public func settleReadReceipts(conversation: ConversationID, ids: [MessageID]) throws {
        try setReadOwed(false, conversation: conversation, ids: ids)
    }

    public func settleReadReceipts(contact: ContactID, ids: [MessageID]) throws {
        try settleReadReceipts(conversation: contact.conversation, ids: ids)
    }

    /// 64 ids to a statement (a frame settles up to 1,024).
    private func setReadOwed(_ owed: Bool, conversation: ConversationID, ids: [MessageID]) throws {
        try BatchSQL.forEachList(ids) { part in
            let args = [SQLValue(owed), .integer(conversation.rawValue)] + BatchSQL.padded(part.map { .blob($0.bytes) })
            try database.execute("""
                UPDATE messages SET read_owed = ?1 WHERE conversation_id = ?2 AND direction = 'in' AND id IN \(BatchSQL.inList)
                  AND (?1 = 0 OR NOT EXISTS (SELECT 1 FROM attachments a WHERE a.message_rowid = messages.rowid AND a.state <> 'complete'))
                """, args)
            // Settled: also for messages that disappeared meanwhile.
            if !owed {
                try database.execute("""
                    UPDATE expired_messages SET read_owed = 0 WHERE ?1 = 0 AND read_owed = 1 AND conversation_id = ?2 AND id IN \(BatchSQL.inList)
                    """, args)
            }
        }
    }

    /// Every (conversation, author) owed any receipt: a comparison per member, and one index
    /// probe for Read.
    public func receiptsOwed() throws -> [(conversation: ConversationID, author: ContactID)] {
        try database.query("""
            SELECT conversation_id, contact_id FROM conversation_members AS c
            WHERE last_incoming_position > delivered_receipted_through
               OR EXISTS (SELECT 1 FROM messages WHERE conversation_id = c.conversation_id AND read_owed = 1 AND author_id = c.contact_id)
               OR EXISTS (SELECT 1 FROM expired_messages
                          WHERE conversation_id = c.conversation_id AND read_owed = 1 AND author_id = c.contact_id)
            """).map { (ConversationID(try $0.int64("conversation_id")), try $0.contactID("contact_id")) }
    }

    /// Contacts owed any receipt in their direct conversation (`receiptsOwed`).
    public func contactsOwedReceipts() throws -> [ContactID] {
        try receiptsOwed().filter { $0.conversation == $0.author.conversation }.map(\.author)
    }
}
