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

/// Receipts owed to contacts, durable until the relay takes them.
///
/// Delivered: owed for every incoming message after the contact's mark
/// (`delivered_receipted_through`), so storing a message owes its receipt in the same write,
/// with nothing more written. Read: a flag on the message (`read_owed`), set in the
/// transaction that marks it shown.
extension StoreAccess {
    /// Delivered receipts owed to `contact`, oldest first: incoming messages after its mark
    /// and after `position` (what this run already sent, nil: nothing).
    public func deliveredReceiptsOwed(contact: ContactID, after position: Int64?, limit: Int) throws -> [OwedDelivered] {
        // A message that disappeared before its receipt went still owes it (expired_messages).
        try database.query("""
            SELECT id, position FROM messages
            WHERE contact_id = ?1 AND direction = 'in'
              AND position > max(?2, (SELECT delivered_receipted_through FROM contacts WHERE id = ?1))
              AND position <= (SELECT last_incoming_position FROM contacts WHERE id = ?1)
            UNION ALL
            SELECT id, position FROM expired_messages
            WHERE contact_id = ?1 AND incoming = 1
              AND position > max(?2, (SELECT delivered_receipted_through FROM contacts WHERE id = ?1))
              AND position <= (SELECT last_incoming_position FROM contacts WHERE id = ?1)
            ORDER BY position LIMIT ?3
            """, [.integer(contact.rawValue), .integer(position ?? 0), .integer(Int64(limit))]).map { row in
            OwedDelivered(id: try row.messageID("id", table: "messages"), position: try row.int64("position"))
        }
    }

    /// How far the relay has taken Delivered receipts from `contact`'s messages.
    public func deliveredReceiptedThrough(contact: ContactID) throws -> Int64 {
        try database.queryOne("SELECT delivered_receipted_through FROM contacts WHERE id = ?",
                              [.integer(contact.rawValue)])?.int64(at: 0) ?? 0
    }

    /// The relay took Delivered receipts for every incoming message up to `position`. The
    /// mark only moves forward.
    public func settleDeliveredReceipts(contact: ContactID, through position: Int64) throws {
        try database.execute("""
            UPDATE contacts SET delivered_receipted_through = ?2 WHERE id = ?1 AND delivered_receipted_through < ?2
            """, [.integer(contact.rawValue), .integer(position)])
    }

    /// Owes `contact` a Read receipt for `ids`. Call it in the transaction that marks them
    /// shown, so a receipt is never owed for what is not true. A file not yet whole here owes
    /// none: Read would say it arrived (`completeReceiving` owes it once it is whole).
    public func oweReadReceipts(contact: ContactID, ids: [MessageID]) throws {
        try setReadOwed(true, contact: contact, ids: ids)
    }

    /// The Read receipts owed to `contact`, oldest first.
    public func readReceiptsOwed(contact: ContactID, limit: Int) throws -> [MessageID] {
        try database.query("""
            SELECT id, position FROM messages WHERE contact_id = ?1 AND read_owed = 1
            UNION ALL
            SELECT id, position FROM expired_messages WHERE contact_id = ?1 AND read_owed = 1
            ORDER BY position LIMIT ?2
            """, [.integer(contact.rawValue), .integer(Int64(limit))]).map { try $0.messageID("id", table: "messages") }
    }

    /// The relay took the Read receipt frame carrying these.
    public func settleReadReceipts(contact: ContactID, ids: [MessageID]) throws {
        try setReadOwed(false, contact: contact, ids: ids)
    }

    /// 64 ids to a statement (a frame settles up to 1,024).
    private func setReadOwed(_ owed: Bool, contact: ContactID, ids: [MessageID]) throws {
        try BatchSQL.forEachList(ids) { part in
            let args = [SQLValue(owed), .integer(contact.rawValue)] + BatchSQL.padded(part.map { .blob($0.bytes) })
            try database.execute("""
                UPDATE messages SET read_owed = ?1 WHERE contact_id = ?2 AND direction = 'in' AND id IN \(BatchSQL.inList)
                  AND (?1 = 0 OR NOT EXISTS (SELECT 1 FROM attachments a WHERE a.message_rowid = messages.rowid AND a.state <> 'complete'))
                """, args)
            // Settled: also for messages that disappeared meanwhile.
            if !owed {
                try database.execute("UPDATE expired_messages SET read_owed = 0 WHERE ?1 = 0 AND read_owed = 1 AND contact_id = ?2 AND id IN \(BatchSQL.inList)",
                                     args)
            }
        }
    }

    /// Contacts owed any receipt: a comparison per contact, and one index probe for Read.
    public func contactsOwedReceipts() throws -> [ContactID] {
        try database.query("""
            SELECT id FROM contacts AS c
            WHERE last_incoming_position > delivered_receipted_through
               OR EXISTS (SELECT 1 FROM messages WHERE contact_id = c.id AND read_owed = 1)
               OR EXISTS (SELECT 1 FROM expired_messages WHERE contact_id = c.id AND read_owed = 1)
            """).map { ContactID(try $0.int64("id")) }
    }
}
