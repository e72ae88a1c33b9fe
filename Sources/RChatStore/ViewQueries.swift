import RChatCore
import RChatSQL

// Queries for the full-screen view: a conversation is picked by its id, never by its name.

extension StoreAccess {
    /// Marks the named incoming messages in `conversation` as shown (the full-screen view
    /// reports what it actually drew); returns the ids that were unread until now, for the
    /// Read receipts. Ids that are unknown, outgoing or already read change nothing.
    public func markRead(conversation: ConversationID, ids: [MessageID], at now: Int64) throws -> [MessageID] {
        guard !ids.isEmpty else { return [] }
        return try atomically {
            var marked: [MessageID] = []
            for id in ids {
                let rows = try database.query("""
                    UPDATE messages SET read_at = ?
                    WHERE conversation_id = ? AND id = ? AND direction = 'in' AND read_at IS NULL
                    RETURNING id
                    """, [.integer(now), .integer(conversation.rawValue), .blob(id.bytes)])
                if !rows.isEmpty { marked.append(id) }
            }
            return marked
        }
    }

    /// When the conversation last saw anything: the time of its newest item (0 when empty).
    /// One index probe per table.
    public func lastActivity(conversation: ConversationID) throws -> Int64 {
        try database.queryOne("""
            SELECT max(coalesce((SELECT created_at FROM messages WHERE conversation_id = ?1 ORDER BY position DESC LIMIT 1), 0),
                       coalesce((SELECT created_at FROM system_rows WHERE conversation_id = ?1 ORDER BY position DESC LIMIT 1), 0))
            """, [.integer(conversation.rawValue)])?.int64(at: 0) ?? 0
    }

    /// How many items the conversation has, from its last position alone: positions run
    /// 1, 2, 3, … over messages and rows together and nothing is ever removed from a
    /// conversation (see Conversation.swift), so the last position is the count — two index
    /// probes instead of `conversationCount`'s walk over the whole history (the view asks
    /// for it on opening and on every new item) — less the actions it holds, which take a
    /// position but are folded into their target (`SchemaActions`; one more index count),
    /// and less the places kept of what was deleted (`expired_messages`: a message its timer
    /// deleted, an action retired — an edit or reaction of a message deleted for everyone,
    /// one that may not apply): a count that kept them made the view's window start one
    /// item late for each, its selection landing on the message above.
    public func conversationLength(conversation: ConversationID) throws -> Int {
        let gone = try database.queryOne("SELECT count(*) FROM expired_messages WHERE conversation_id = ?",
                                         [.integer(conversation.rawValue)])?.int(at: 0) ?? 0
        return Int(try nextPosition(conversation) - 1) - (try actionCount(conversation)) - gone
    }
}
