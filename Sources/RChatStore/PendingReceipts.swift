import RChatCore
import RChatSQL

/// Which receipt is owed.
public enum ReceiptKind: String, Sendable, CaseIterable {
    case delivered, read
}

extension StoreAccess {
    /// Owes `contact` a receipt for `ids`. Call it in the transaction that stored (Delivered)
    /// or marked read (Read) the messages, so a receipt is never owed for what is not true.
    public func owePendingReceipts(contact: ContactID, kind: ReceiptKind, ids: [MessageID], at now: Int64) throws {
        for id in ids {
            try database.execute("""
                INSERT OR IGNORE INTO pending_receipts (contact_id, id, kind, created_at) VALUES (?, ?, ?, ?)
                """, [.integer(contact.rawValue), .blob(id.bytes), .text(kind.rawValue), .integer(now)])
        }
    }

    /// The receipts owed to `contact`, oldest first.
    public func pendingReceipts(contact: ContactID, kind: ReceiptKind, limit: Int) throws -> [MessageID] {
        try database.query("""
            SELECT id FROM pending_receipts WHERE contact_id = ? AND kind = ? ORDER BY created_at, id LIMIT ?
            """, [.integer(contact.rawValue), .text(kind.rawValue), .integer(Int64(limit))]).compactMap {
            MessageID(bytes: try $0.blob("id"))
        }
    }

    /// Contacts that are owed any receipt.
    public func contactsOwedReceipts() throws -> [ContactID] {
        try database.query("SELECT DISTINCT contact_id FROM pending_receipts").map { ContactID(try $0.int64("contact_id")) }
    }

    /// The relay took the receipt frame carrying these.
    public func settlePendingReceipts(contact: ContactID, kind: ReceiptKind, ids: [MessageID]) throws {
        for id in ids {
            try database.execute("DELETE FROM pending_receipts WHERE contact_id = ? AND kind = ? AND id = ?",
                                 [.integer(contact.rawValue), .text(kind.rawValue), .blob(id.bytes)])
        }
    }
}
