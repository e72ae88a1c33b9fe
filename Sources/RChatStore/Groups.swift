import RChatCore
import RChatSQL

/// A group conversation as the store keeps it (`SchemaGroups`).
public struct StoredGroup: Equatable, Sendable {
    public let conversation: ConversationID
    /// Its id in the membership log: its create's (`GroupID`).
    public let groupID: [UInt8]
    public let name: String
    /// This side's standing: a current member, or it left or was removed.
    public let state: ConversationMember.State
    public let createdAt: Int64
    /// `rchat mute GROUP`: its messages raise no alert.
    public var isMuted = false
    /// `rchat block GROUP`: nothing of it is stored or shown (its log is still taken, so the
    /// roster stays true), nothing is written to it.
    public var isBlocked = false
    /// The heads of this side's log as `GroupLog.sortedHeads` gives them, each 32 bytes,
    /// concatenated (empty before schema step 19 set them): every group message this side
    /// seals carries them (`GroupWire`), so a member can tell what either log lacks.
    public var heads: [UInt8] = []
}

/// A group's message kept until this side holds the group (`SchemaGroupWaiting`).
public struct WaitingGroupMessage: Equatable, Sendable {
    public let author: ContactID
    public let id: MessageID
    /// The group message's body as it came: group id, timer, its author's heads, content
    /// (`GroupWire`).
    public let body: [UInt8]
    public let seq: Int64?
    public let sentAt: Int64

    public init(author: ContactID, id: MessageID, body: [UInt8], seq: Int64?, sentAt: Int64) {
        self.author = author; self.id = id; self.body = body; self.seq = seq; self.sentAt = sentAt
    }
}

/// One change of a group's log as held: the bytes its author signed, and whether it is folded
/// into the roster (`taken`) or waits for a parent.
public struct StoredGroupChange: Equatable, Sendable {
    public let id: [UInt8]
    public let bytes: [UInt8]
    public let taken: Bool
}

/// Groups, their logs and their rosters (schema step 16). What the log folds to is decided in
/// Core (`GroupLog`); the store keeps the changes and what they folded to, in the caller's
/// transaction.
extension StoreAccess {
    private static var groupColumns: String { "conversation_id, group_id, name, state, created_at, muted, blocked, heads" }

    /// A group this side holds a log of: a conversation with the next negative id, no member
    /// rows yet (`setRoster`).
    public func insertGroup(groupID: [UInt8], name: String, at now: Int64) throws -> ConversationID {
        try atomically {
            if try group(id: groupID) != nil { throw StoreError.groupExists }
            let next = (try database.queryOne("SELECT min(0, coalesce(min(id), 0)) - 1 FROM conversations")?.int64(at: 0)) ?? -1
            try database.execute("INSERT INTO conversations (id, kind, created_at) VALUES (?, 'group', ?)", [.integer(next), .integer(now)])
            try database.execute("INSERT INTO groups (conversation_id, group_id, name, created_at) VALUES (?, ?, ?, ?)",
                                 [.integer(next), .blob(groupID), .text(name), .integer(now)])
            return ConversationID(next)
        }
    }

    public func group(_ conversation: ConversationID) throws -> StoredGroup? {
        try database.queryOne("SELECT \(Self.groupColumns) FROM groups WHERE conversation_id = ?", [.integer(conversation.rawValue)])
            .map(Self.decodeGroup)
    }

    public func group(id: [UInt8]) throws -> StoredGroup? {
        try database.queryOne("SELECT \(Self.groupColumns) FROM groups WHERE group_id = ?", [.blob(id)]).map(Self.decodeGroup)
    }

    /// Every group, by name (compared as contact names are), oldest first among equal names.
    public func groups() throws -> [StoredGroup] {
        try database.query("SELECT \(Self.groupColumns) FROM groups ORDER BY conversation_id DESC").map(Self.decodeGroup)
            .sorted { (Contact.nameKey($0.name), -$0.conversation.rawValue) < (Contact.nameKey($1.name), -$1.conversation.rawValue) }
    }

    /// The groups with this name, compared as contact names are (more than one: the user is
    /// asked which).
    public func groups(named name: String) throws -> [StoredGroup] {
        let key = Contact.nameKey(name)
        return try groups().filter { Contact.nameKey($0.name) == key }
    }

    /// Keeps a change of the group's log (again: its `taken` is updated).
    public func storeGroupChange(_ conversation: ConversationID, id: [UInt8], bytes: [UInt8], taken: Bool, at now: Int64) throws {
        try translatingConstraints(foreignKey: .unknownConversation(conversation)) {
            try database.execute("""
                INSERT INTO group_changes (conversation_id, change_id, change, taken, received_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (conversation_id, change_id) DO UPDATE SET taken = excluded.taken
                """, [.integer(conversation.rawValue), .blob(id), .blob(bytes), SQLValue(taken), .integer(now)])
        }
    }

    /// The group's log as held, in the order received.
    public func groupChanges(_ conversation: ConversationID) throws -> [StoredGroupChange] {
        try database.query("""
            SELECT change_id, change, taken FROM group_changes WHERE conversation_id = ? ORDER BY received_at, change_id
            """, [.integer(conversation.rawValue)]).map { row in
            StoredGroupChange(id: try row.blob("change_id"), bytes: try row.blob("change"), taken: try row.bool("taken"))
        }
    }

    /// What the log folds to now: the group's name, this side's standing, and each other
    /// member's role (`members`, by contact). Anyone who was a member and is not any more is
    /// `gone` (left or removed, as the log says), so what is written from now on has no
    /// delivery to them; anyone new becomes a current member.
    public func setRoster(_ conversation: ConversationID, name: String, selfState: ConversationMember.State, heads: [UInt8],
                          members: [ContactID: ConversationMember.Role], gone: [ContactID: ConversationMember.State]) throws {
        try atomically {
            try database.execute("UPDATE groups SET name = ?, state = ?, heads = ? WHERE conversation_id = ?",
                                 [.text(name), .text(selfState.rawValue), .blob(heads), .integer(conversation.rawValue)])
            guard database.changes == 1 else { throw StoreError.unknownConversation(conversation) }
            for (member, role) in members.sorted(by: { $0.key < $1.key }) {
                try translatingConstraints(foreignKey: .unknownContact(member)) {
                    try database.execute("""
                        INSERT INTO conversation_members (conversation_id, contact_id, role, state) VALUES (?, ?, ?, 'current')
                        ON CONFLICT (conversation_id, contact_id) DO UPDATE SET role = excluded.role, state = 'current'
                        """, [.integer(conversation.rawValue), .integer(member.rawValue), .text(role.rawValue)])
                }
            }
            for (member, state) in gone.sorted(by: { $0.key < $1.key }) where members[member] == nil {
                try database.execute("UPDATE conversation_members SET state = ? WHERE conversation_id = ? AND contact_id = ?",
                                     [.text(state.rawValue), .integer(conversation.rawValue), .integer(member.rawValue)])
            }
        }
    }

    /// The group's disappearing-message timer, as its log folds it (no counter of its own:
    /// the log orders timer changes as it orders every change).
    public func setGroupTimer(_ conversation: ConversationID, _ timer: DisappearingTimer) throws {
        try database.execute("UPDATE conversations SET timer_seconds = ? WHERE id = ? AND kind = 'group'",
                             [.integer(Int64(timer.rawValue)), .integer(conversation.rawValue)])
    }

    static func decodeGroup(_ row: Row) throws -> StoredGroup {
        StoredGroup(conversation: ConversationID(try row.int64("conversation_id")), groupID: try row.blob("group_id"),
                    name: try row.string("name"), state: try row.enumValue("state", table: "groups", as: ConversationMember.State.self),
                    createdAt: try row.int64("created_at"), isMuted: try row.bool("muted"), isBlocked: try row.bool("blocked"),
                    heads: try row.blob("heads"))
    }

    public func setMuted(group conversation: ConversationID, _ muted: Bool) throws {
        try database.execute("UPDATE groups SET muted = ? WHERE conversation_id = ?", [SQLValue(muted), .integer(conversation.rawValue)])
        guard database.changes == 1 else { throw StoreError.unknownConversation(conversation) }
    }

    public func setBlocked(group conversation: ConversationID, _ blocked: Bool) throws {
        try database.execute("UPDATE groups SET blocked = ? WHERE conversation_id = ?", [SQLValue(blocked), .integer(conversation.rawValue)])
        guard database.changes == 1 else { throw StoreError.unknownConversation(conversation) }
    }

    /// Keeps a message of a group this side does not hold, until a log brings the group
    /// (`takeWaiting`). What waited since before `cutoff` goes first; false (nothing kept)
    /// when the author has `limit` waiting already. A copy of one waiting changes nothing.
    public func keepWaiting(_ message: WaitingGroupMessage, group: [UInt8], at now: Int64, cutoff: Int64, limit: Int) throws -> Bool {
        try atomically {
            try database.execute("DELETE FROM group_messages_waiting WHERE received_at < ?", [.integer(cutoff)])
            let kept = try database.queryOne("SELECT 1 FROM group_messages_waiting WHERE author_id = ? AND message_id = ?",
                                             [.integer(message.author.rawValue), .blob(message.id.bytes)])
            guard kept == nil else { return true }
            let waiting = try database.queryOne("SELECT count(*) FROM group_messages_waiting WHERE author_id = ?",
                                                [.integer(message.author.rawValue)])?.int64(at: 0) ?? 0
            guard waiting < limit else { return false }
            try translatingConstraints(foreignKey: .unknownContact(message.author)) {
                try database.execute("""
                    INSERT INTO group_messages_waiting (author_id, message_id, group_id, body, seq, sent_at, received_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, [.integer(message.author.rawValue), .blob(message.id.bytes), .blob(group), .blob(message.body),
                          SQLValue(message.seq), .integer(message.sentAt), .integer(now)])
            }
            return true
        }
    }

    /// What waited for the group `group` (since `cutoff`) that `taking` takes, in the order it
    /// came; taken away, and with it whatever waited since before `cutoff`. The rest waits on.
    public func takeWaiting(group: [UInt8], cutoff: Int64,
                            where taking: (WaitingGroupMessage) throws -> Bool = { _ in true }) throws -> [WaitingGroupMessage] {
        try atomically {
            let rows = try database.query("""
                SELECT author_id, message_id, body, seq, sent_at FROM group_messages_waiting
                WHERE group_id = ? AND received_at >= ? ORDER BY received_at, author_id, seq
                """, [.blob(group), .integer(cutoff)]).map { row in
                WaitingGroupMessage(author: try row.contactID("author_id"), id: try row.messageID("message_id", table: "group_messages_waiting"),
                                    body: try row.blob("body"), seq: try row.optionalInt64("seq"), sentAt: try row.int64("sent_at"))
            }
            try database.execute("DELETE FROM group_messages_waiting WHERE group_id = ? AND received_at < ?", [.blob(group), .integer(cutoff)])
            let taken = try rows.filter(taking)
            for row in taken {
                try database.execute("DELETE FROM group_messages_waiting WHERE author_id = ? AND message_id = ?",
                                     [.integer(row.author.rawValue), .blob(row.id.bytes)])
            }
            return taken
        }
    }

    /// Which of `ids` the group's log holds taken (folded into its roster).
    public func takenChanges(_ conversation: ConversationID, among ids: [[UInt8]]) throws -> Set<[UInt8]> {
        var held: Set<[UInt8]> = []
        for id in ids where try database.queryOne("SELECT 1 FROM group_changes WHERE conversation_id = ? AND change_id = ? AND taken = 1",
                                                   [.integer(conversation.rawValue), .blob(id)]) != nil {
            held.insert(id)
        }
        return held
    }

    /// How many messages wait for a group to be held (all groups).
    public func waitingGroupMessages() throws -> Int {
        Int(try database.queryOne("SELECT count(*) FROM group_messages_waiting")?.int64(at: 0) ?? 0)
    }
}
