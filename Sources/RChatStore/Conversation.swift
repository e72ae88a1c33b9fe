import RChatCore
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
    public func conversation(_ conversation: ConversationID, limit: Int, before: Int64? = nil) throws -> [StoredConversationItem] {
        guard limit > 0 else { return [] }
        let args: [SQLValue] = [.integer(conversation.rawValue), .integer(before ?? Int64.max), SQLValue(limit)]
        return try consistently {
            let messages = try withSummaries(try database.query("""
                \(Self.messageSelect)
                WHERE m.conversation_id = ? AND m.position < ? AND m.target IS NULL ORDER BY m.position DESC LIMIT ?
                """, args).map(Self.decodeMessage)).map(StoredConversationItem.message)
            let rows = try database.query("""
                SELECT \(Self.systemRowColumns) FROM system_rows
                WHERE conversation_id = ? AND position < ? ORDER BY position DESC LIMIT ?
                """, args).map { StoredConversationItem.row(try Self.decodeSystemRow($0)) }
            return Array((messages + rows).sorted { $0.position > $1.position }.prefix(limit).reversed())
        }
    }

    /// The contact's direct conversation (`conversation(_:limit:before:)`).
    public func conversation(contact: ContactID, limit: Int, before: Int64? = nil) throws -> [StoredConversationItem] {
        try conversation(contact.conversation, limit: limit, before: before)
    }

    /// The same kind of page, addressed as the chat view counts: skip the latest
    /// `skippingLatest` items (0: the page at the end). Finds the boundary on the
    /// (conversation, position) indexes alone, so a deep page costs an index walk, not a
    /// decode of everything after it.
    public func conversation(_ conversation: ConversationID, limit: Int, skippingLatest skip: Int) throws -> [StoredConversationItem] {
        guard limit > 0, skip >= 0 else { return [] }
        return try consistently {
            guard let boundary = try database.queryOne("""
                SELECT position FROM messages WHERE conversation_id = ?1 AND (?3 = 0 OR target IS NULL)
                UNION ALL
                SELECT position FROM system_rows WHERE conversation_id = ?1
                ORDER BY position DESC LIMIT 1 OFFSET ?2
                """, [.integer(conversation.rawValue), SQLValue(skip), SQLValue(try actionCount(conversation) > 0)]) else { return [] }
            return try self.conversation(conversation, limit: limit, before: try boundary.int64("position") + 1)
        }
    }

    public func conversation(contact: ContactID, limit: Int, skippingLatest skip: Int) throws -> [StoredConversationItem] {
        try conversation(contact.conversation, limit: limit, skippingLatest: skip)
    }

    /// How many items (messages and system rows) the conversation has.
    public func conversationCount(_ conversation: ConversationID) throws -> Int {
        try database.queryOne("""
            SELECT (SELECT count(*) FROM messages WHERE conversation_id = ?1)
                 - (SELECT count(*) FROM messages WHERE conversation_id = ?1 AND target IS NOT NULL)
                 + (SELECT count(*) FROM system_rows WHERE conversation_id = ?1)
            """, [.integer(conversation.rawValue)])?.int(at: 0) ?? 0
    }

    public func conversationCount(contact: ContactID) throws -> Int { try conversationCount(contact.conversation) }

    /// The next position in the conversation: one past the last message or row.
    /// Call inside the insert's transaction (the write lock makes it race-free); three index
    /// probes, no counter to write.
    func nextPosition(_ conversation: ConversationID) throws -> Int64 {
        let last = try database.queryOne("""
            SELECT max(coalesce((SELECT position FROM messages WHERE conversation_id = ?1 ORDER BY position DESC LIMIT 1), 0),
                       coalesce((SELECT position FROM system_rows WHERE conversation_id = ?1 ORDER BY position DESC LIMIT 1), 0),
                       coalesce((SELECT position FROM expired_messages WHERE conversation_id = ?1 ORDER BY position DESC LIMIT 1), 0))
            """, [.integer(conversation.rawValue)])?.int64(at: 0) ?? 0
        return last + 1
    }

    func nextPosition(contact: ContactID) throws -> Int64 { try nextPosition(contact.conversation) }
}

/// What a conversation is: with one other member, or a group.
public enum ConversationKind: String, Sendable, Equatable {
    case direct
    case group
}

/// A member of a conversation other than this side, as `conversation_members` keeps it.
public struct ConversationMember: Equatable, Sendable {
    public enum Role: String, Sendable, Equatable {
        case member
        /// May add, remove and rename (a group's).
        case admin
    }

    public enum State: String, Sendable, Equatable {
        /// Written to, and counted in what a message shows.
        case current
        case left
        case removed
    }

    public let contact: ContactID
    public let role: Role
    public let state: State
}

/// A conversation as stored.
public struct StoredConversation: Equatable, Sendable {
    public let id: ConversationID
    public let kind: ConversationKind
    public let createdAt: Int64
    /// Every member but this side, current or not, by contact id.
    public let members: [ConversationMember]

    public var currentMembers: [ContactID] { members.filter { $0.state == .current }.map(\.contact) }
}

/// Conversations and their members (schema step 15). A contact's direct conversation is made
/// with it (a trigger on `contacts`) and has its id; a group is made here, with a negative id.
extension StoreAccess {
    public func storedConversation(_ id: ConversationID) throws -> StoredConversation? {
        try consistently {
            guard let row = try database.queryOne("SELECT kind, created_at FROM conversations WHERE id = ?", [.integer(id.rawValue)])
            else { return nil }
            return StoredConversation(id: id, kind: try row.enumValue("kind", table: "conversations", as: ConversationKind.self),
                                      createdAt: try row.int64("created_at"), members: try members(id))
        }
    }

    /// The members of `conversation` other than this side, by contact id.
    public func members(_ conversation: ConversationID) throws -> [ConversationMember] {
        try database.query("SELECT contact_id, role, state FROM conversation_members WHERE conversation_id = ? ORDER BY contact_id",
                           [.integer(conversation.rawValue)]).map { row in
            ConversationMember(contact: try row.contactID("contact_id"),
                               role: try row.enumValue("role", table: "conversation_members", as: ConversationMember.Role.self),
                               state: try row.enumValue("state", table: "conversation_members", as: ConversationMember.State.self))
        }
    }

    /// Those written to now: a message written now has a delivery to each. A direct
    /// conversation's is the contact with its id, read with no query.
    public func currentMembers(_ conversation: ConversationID) throws -> [ContactID] {
        if conversation.rawValue > 0 { return [ContactID(conversation)] }
        return try database.query("""
            SELECT contact_id FROM conversation_members WHERE conversation_id = ? AND state = 'current' ORDER BY contact_id
            """, [.integer(conversation.rawValue)]).map { try $0.contactID("contact_id") }
    }

    /// Makes a group of `members` (contacts; this side is a member without a row), with the
    /// next negative id. Refused: no member, or one that is not a contact (`unknownContact`).
    @discardableResult
    public func createGroup(members: [ContactID], admins: Set<ContactID> = [], at now: Int64) throws -> ConversationID {
        guard !members.isEmpty else { throw StoreError.unknownContact(ContactID(0)) }
        return try atomically {
            let next = (try database.queryOne("SELECT min(0, coalesce(min(id), 0)) - 1 FROM conversations")?.int64(at: 0)) ?? -1
            try database.execute("INSERT INTO conversations (id, kind, created_at) VALUES (?, 'group', ?)", [.integer(next), .integer(now)])
            for member in Set(members).sorted() {
                try translatingConstraints(foreignKey: .unknownContact(member)) {
                    try database.execute("INSERT INTO conversation_members (conversation_id, contact_id, role) VALUES (?, ?, ?)",
                                         [.integer(next), .integer(member.rawValue),
                                          .text((admins.contains(member) ? ConversationMember.Role.admin : .member).rawValue)])
                }
            }
            return ConversationID(next)
        }
    }

    /// A member left or was removed (or is current again): what is written afterwards has no
    /// delivery to them, and their deliveries no longer count in what a message shows.
    public func setMemberState(_ state: ConversationMember.State, conversation: ConversationID, member: ContactID) throws {
        try database.execute("UPDATE conversation_members SET state = ? WHERE conversation_id = ? AND contact_id = ?",
                             [.text(state.rawValue), .integer(conversation.rawValue), .integer(member.rawValue)])
        guard database.changes == 1 else { throw StoreError.unknownContact(member) }
    }
}
