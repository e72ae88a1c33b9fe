import RChatCore
import RChatSQL

/// A message as it arrives, before it is stored.
public struct IncomingMessage: Sendable {
    public let id: MessageID
    public let text: String
    public let sentAt: Int64
    public let seq: Int64?

    public init(id: MessageID, text: String, sentAt: Int64, seq: Int64?) {
        self.id = id
        self.text = text
        self.sentAt = sentAt
        self.seq = seq
    }
}

extension StoreAccess {
    /// Stores what arrived from `contact` in one batch — the engine's fast path, many
    /// messages per transaction — with the same rules as `insertIncoming`: each id once,
    /// undecryptable ids struck off. A Delivered receipt is owed for each new message from the
    /// moment this commits (by its position: `deliveredReceiptsOwed`). Returns the messages
    /// newly stored, in order.
    public func insertIncoming(contact: ContactID, _ messages: [IncomingMessage], at now: Int64) throws -> [(MessageID, MessageRowID)] {
        guard !messages.isEmpty else { return [] }
        return try atomically {
            var position = try nextPosition(contact: contact)
            var stored: [(MessageID, MessageRowID)] = []
            stored.reserveCapacity(messages.count)
            // ON CONFLICT names the one constraint a duplicate breaks; any other failure still
            // throws (INSERT OR IGNORE would also hide CHECK and NOT NULL failures). No
            // RETURNING: SQLite builds an ephemeral table for it on every execution, which
            // cost more than the rest of the insert; `changes` and the last rowid say the same.
            try translatingConstraints(foreignKey: .unknownContact(contact)) {
                for m in messages {
                    try database.execute("""
                        INSERT INTO messages (contact_id, id, direction, text, created_at, received_at, seq, position)
                        VALUES (?, ?, 'in', ?, ?, ?, ?, ?)
                        ON CONFLICT (contact_id, id) DO NOTHING
                        """, [.integer(contact.rawValue), .blob(m.id.bytes), .text(m.text), .integer(m.sentAt),
                              .integer(now), SQLValue(m.seq), .integer(position)])
                    guard database.changes == 1 else { continue }
                    stored.append((m.id, MessageRowID(database.lastInsertRowID)))
                    position += 1
                }
            }
            if try database.queryOne("SELECT 1 FROM undecryptable WHERE contact_id = ? LIMIT 1", [.integer(contact.rawValue)]) != nil {
                for (id, _) in stored {
                    try database.execute("DELETE FROM undecryptable WHERE contact_id = ? AND id = ?",
                                         [.integer(contact.rawValue), .blob(id.bytes)])
                }
            }
            return stored
        }
    }
}
