import RChatCore
import RChatSQL

/// A row in a conversation that is not a message (recovery notices), with the
/// messages it is about and, when offered, its Resend action. The stored form of Core's
/// `SystemRow` read model.
public struct StoredSystemRow: Equatable, Sendable {
    public let id: Int64
    public let contact: ContactID
    /// What it reports, for the engine (e.g. "auto-resent", "not-delivered", "new-session").
    public let kind: String
    /// The row exactly as shown.
    public let text: String
    public let action: SystemRow.Action?
    public let messageIDs: [MessageID]
    public let createdAt: Int64
    public let position: Int64
}

extension StoreAccess {
    static var systemRowColumns: String { "id, contact_id, kind, text, action, message_ids, created_at, position" }

    /// Adds a row at the end of the conversation.
    @discardableResult
    public func addSystemRow(contact: ContactID, kind: String, text: String, action: SystemRow.Action?,
                             messageIDs: [MessageID], at now: Int64) throws -> StoredSystemRow {
        try atomically {
            let position = try nextPosition(contact: contact)
            let rows = try translatingConstraints(foreignKey: .unknownContact(contact)) {
                try database.query("""
                    INSERT INTO system_rows (contact_id, kind, text, action, message_ids, created_at, position)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    RETURNING \(Self.systemRowColumns)
                    """, [.integer(contact.rawValue), .text(kind), .text(text), SQLValue(action?.rawValue),
                          .blob(messageIDs.flatMap(\.bytes)), .integer(now), .integer(position)])
            }
            return try Self.decodeSystemRow(rows[0])
        }
    }

    /// Whether the conversation has a row of `kind` added at `since` or later.
    public func hasSystemRow(contact: ContactID, kind: String, since: Int64) throws -> Bool {
        try database.queryOne("SELECT 1 AS found FROM system_rows WHERE contact_id = ? AND kind = ? AND created_at >= ? LIMIT 1",
                              [.integer(contact.rawValue), .text(kind), .integer(since)]) != nil
    }

    public func systemRow(id: Int64) throws -> StoredSystemRow? {
        try database.queryOne("SELECT \(Self.systemRowColumns) FROM system_rows WHERE id = ?", [.integer(id)])
            .map(Self.decodeSystemRow)
    }

    /// Offers or withdraws the row's action (Resend is offered only while keys are unchanged).
    public func setSystemRowAction(id: Int64, _ action: SystemRow.Action?) throws {
        try database.execute("UPDATE system_rows SET action = ? WHERE id = ?", [SQLValue(action?.rawValue), .integer(id)])
    }

    /// Every message id a row of this conversation offers Resend for.
    public func idsOfferedForResend(contact: ContactID) throws -> [MessageID] {
        try database.query("SELECT message_ids FROM system_rows WHERE contact_id = ? AND action = 'resend'",
                           [.integer(contact.rawValue)]).flatMap { try $0.messageIDs("message_ids", table: "system_rows") }
    }

    static func decodeSystemRow(_ row: Row) throws -> StoredSystemRow {
        let action = try row.optionalString("action")
        return StoredSystemRow(id: try row.int64("id"), contact: try row.contactID("contact_id"),
                         kind: try row.string("kind"), text: try row.string("text"),
                         action: try action.map { text in
                             guard let action = SystemRow.Action(rawValue: text) else {
                                 throw StoreError.malformedValue(table: "system_rows", column: "action", detail: "unknown action \(text)")
                             }
                             return action
                         },
                         messageIDs: try row.messageIDs("message_ids", table: "system_rows"),
                         createdAt: try row.int64("created_at"), position: try row.int64("position"))
    }
}
