import RChatCore
import RChatSQL

/// An alert as raised (desktop or terminal); kept so that nothing is alerted twice.
public struct AlertRecord: Equatable, Sendable {
    public let id: Int64
    public let contact: ContactID?
    public let message: MessageRowID?
    public let kind: String
    public let title: String
    public let text: String
    public let createdAt: Int64
}

extension StoreAccess {
    private static var alertColumns: String { "id, conversation_id, message_rowid, kind, title, text, created_at" }

    /// Records an alert, unless one of this kind was already recorded for this message:
    /// then nothing changes and the result is nil (do not alert again). Alerts without a
    /// message (a summary) are always recorded.
    @discardableResult
    public func recordAlert(contact: ContactID?, message: MessageRowID?, kind: String, title: String,
                            text: String, at now: Int64) throws -> AlertRecord? {
        try recordAlert(conversation: contact?.conversation, message: message, kind: kind, title: title, text: text, at: now)
    }

    /// As `recordAlert(contact:…)`, for any conversation (a group's too).
    @discardableResult
    public func recordAlert(conversation: ConversationID?, message: MessageRowID?, kind: String, title: String,
                            text: String, at now: Int64) throws -> AlertRecord? {
        try database.query("""
            INSERT INTO alerts (conversation_id, message_rowid, kind, title, text, created_at)
            VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (message_rowid, kind) DO NOTHING
            RETURNING \(Self.alertColumns)
            """, [SQLValue(conversation?.rawValue), SQLValue(message?.rawValue), .text(kind), .text(title), .text(text),
                  .integer(now)]).first.map(Self.decodeAlert)
    }

    public func hasAlert(message: MessageRowID, kind: String) throws -> Bool {
        try database.queryOne("SELECT 1 FROM alerts WHERE message_rowid = ? AND kind = ?",
                              [.integer(message.rawValue), .text(kind)]) != nil
    }

    /// Alerts recorded at or after `since`, oldest first.
    public func alerts(since: Int64) throws -> [AlertRecord] {
        try database.query("SELECT \(Self.alertColumns) FROM alerts WHERE created_at >= ? ORDER BY created_at, id",
                           [.integer(since)]).map(Self.decodeAlert)
    }

    private static func decodeAlert(_ row: Row) throws -> AlertRecord {
        AlertRecord(id: try row.int64("id"), contact: try row.optionalInt64("conversation_id").map(ContactID.init),
                    message: try row.optionalInt64("message_rowid").map(MessageRowID.init),
                    kind: try row.string("kind"), title: try row.string("title"), text: try row.string("text"),
                    createdAt: try row.int64("created_at"))
    }
}
