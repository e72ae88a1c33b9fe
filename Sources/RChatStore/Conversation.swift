import RChatSQL

/// One line of a conversation: a message or a system row.
public enum StoredConversationItem: Equatable, Sendable {
    case message(StoredMessage)
    case row(StoredSystemRow)

    public var position: Int64 {
        switch self {
        case .message(let m): return m.position
        case .row(let r): return r.position
        }
    }
}

/// Conversation order is the order things were stored on this machine: messages and system
/// rows of a conversation share one sequence of positions (1, 2, 3, …), so they interleave
/// as they happened here.
/// Times are shown but do not order: peers' clocks differ, and a message held by the relay
/// belongs where it arrived. A resend keeps its message's place.
extension StoreAccess {
    /// A page of the conversation, oldest first: the latest `limit` items before `before`
    /// (a position; nil for the end). The first item's position is the `before` of the
    /// page above it. Reads only `limit` rows from each table, whatever the history's size.
    public func conversation(contact: ContactID, limit: Int, before: Int64? = nil) throws -> [StoredConversationItem] {
        guard limit > 0 else { return [] }
        let args: [SQLValue] = [.integer(contact.rawValue), .integer(before ?? Int64.max), SQLValue(limit)]
        return try consistently {
            let messages = try database.query("""
                \(Self.messageSelect)
                WHERE m.contact_id = ? AND m.position < ? ORDER BY m.position DESC LIMIT ?
                """, args).map { StoredConversationItem.message(try Self.decodeMessage($0)) }
            let rows = try database.query("""
                SELECT \(Self.systemRowColumns) FROM system_rows
                WHERE contact_id = ? AND position < ? ORDER BY position DESC LIMIT ?
                """, args).map { StoredConversationItem.row(try Self.decodeSystemRow($0)) }
            return Array((messages + rows).sorted { $0.position > $1.position }.prefix(limit).reversed())
        }
    }

    /// The same kind of page, addressed as the chat view counts: skip the latest
    /// `skippingLatest` items (0: the page at the end). Finds the boundary on the
    /// (contact, position) indexes alone, so a deep page costs an index walk, not a decode
    /// of everything after it.
    public func conversation(contact: ContactID, limit: Int, skippingLatest skip: Int) throws -> [StoredConversationItem] {
        guard limit > 0, skip >= 0 else { return [] }
        return try consistently {
            guard let boundary = try database.queryOne("""
                SELECT position FROM messages WHERE contact_id = ?1
                UNION ALL
                SELECT position FROM system_rows WHERE contact_id = ?1
                ORDER BY position DESC LIMIT 1 OFFSET ?2
                """, [.integer(contact.rawValue), SQLValue(skip)]) else { return [] }
            return try conversation(contact: contact, limit: limit, before: try boundary.int64("position") + 1)
        }
    }

    /// How many items (messages and system rows) the conversation has.
    public func conversationCount(contact: ContactID) throws -> Int {
        try database.queryOne("""
            SELECT (SELECT count(*) FROM messages WHERE contact_id = ?1)
                 + (SELECT count(*) FROM system_rows WHERE contact_id = ?1)
            """, [.integer(contact.rawValue)])?.int(at: 0) ?? 0
    }

    /// The next position in `contact`'s conversation: one past the last message or row.
    /// Call inside the insert's transaction (the write lock makes it race-free); two index
    /// probes, no counter to write.
    func nextPosition(contact: ContactID) throws -> Int64 {
        let last = try database.queryOne("""
            SELECT max(coalesce((SELECT position FROM messages WHERE contact_id = ?1 ORDER BY position DESC LIMIT 1), 0),
                       coalesce((SELECT position FROM system_rows WHERE contact_id = ?1 ORDER BY position DESC LIMIT 1), 0),
                       coalesce((SELECT position FROM expired_messages WHERE contact_id = ?1 ORDER BY position DESC LIMIT 1), 0))
            """, [.integer(contact.rawValue)])?.int64(at: 0) ?? 0
        return last + 1
    }
}
