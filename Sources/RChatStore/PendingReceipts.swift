import RChatCore
import RChatSQL

/// Which receipt is owed.
public enum ReceiptKind: String, Sendable, CaseIterable {
    case delivered, read

    /// The message column that says this receipt is owed.
    var column: String { self == .delivered ? "delivered_owed" : "read_owed" }
}

/// Receipts owed to contacts live on the messages they are about (`delivered_owed`,
/// `read_owed`, each with a partial index), so storing a message and owing its Delivered
/// receipt is one row written.
extension StoreAccess {
    /// Owes `contact` a receipt for `ids`. Call it in the transaction that stored (Delivered)
    /// or marked read (Read) the messages, so a receipt is never owed for what is not true.
    public func owePendingReceipts(contact: ContactID, kind: ReceiptKind, ids: [MessageID], at now: Int64) throws {
        for id in ids {
            try database.execute("UPDATE messages SET \(kind.column) = 1 WHERE contact_id = ? AND id = ? AND direction = 'in'",
                                 [.integer(contact.rawValue), .blob(id.bytes)])
        }
    }

    /// The receipts owed to `contact`, oldest first.
    public func pendingReceipts(contact: ContactID, kind: ReceiptKind, limit: Int) throws -> [MessageID] {
        try database.query("""
            SELECT id FROM messages WHERE contact_id = ? AND \(kind.column) = 1 ORDER BY position LIMIT ?
            """, [.integer(contact.rawValue), .integer(Int64(limit))]).compactMap {
            MessageID(bytes: try $0.blob("id"))
        }
    }

    /// Contacts that are owed any receipt.
    public func contactsOwedReceipts() throws -> [ContactID] {
        try database.query("""
            SELECT DISTINCT contact_id FROM messages WHERE delivered_owed = 1
            UNION SELECT DISTINCT contact_id FROM messages WHERE read_owed = 1
            """).map { ContactID(try $0.int64("contact_id")) }
    }

    /// The relay took the receipt frame carrying these.
    public func settlePendingReceipts(contact: ContactID, kind: ReceiptKind, ids: [MessageID]) throws {
        for id in ids {
            try database.execute("UPDATE messages SET \(kind.column) = 0 WHERE contact_id = ? AND id = ?",
                                 [.integer(contact.rawValue), .blob(id.bytes)])
        }
    }
}
