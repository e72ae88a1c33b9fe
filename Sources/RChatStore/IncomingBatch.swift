import RChatCore
import RChatSQL

/// A message as it arrives, before it is stored: its content, and the bytes it came as
/// (stored as they are, not encoded again).
public struct IncomingMessage: Sendable {
    public let id: MessageID
    public let content: MessageContent
    public let encodedContent: [UInt8]
    public let sentAt: Int64
    public let seq: Int64?

    public init(id: MessageID, content: MessageContent, sentAt: Int64, seq: Int64?) {
        self.init(id: id, content: content, encodedContent: content.encoded(), sentAt: sentAt, seq: seq)
    }

    /// A content that arrived as `encodedContent` and decoded as `content`.
    public init(id: MessageID, content: MessageContent, encodedContent: [UInt8], sentAt: Int64, seq: Int64?) {
        self.id = id
        self.content = content
        self.encodedContent = encodedContent
        self.sentAt = sentAt
        self.seq = seq
    }
}

/// A message `insertIncoming` stored: a Delivered receipt is owed for it by its position.
public struct StoredIncoming: Equatable, Sendable {
    public let id: MessageID
    public let row: MessageRowID
    public let position: Int64

    public var owed: OwedDelivered { OwedDelivered(id: id, position: position) }
}

extension StoreAccess {
    /// Stores what `author` wrote in `conversation`, arrived in one batch — the engine's fast
    /// path, many messages per transaction — with the same rules as `insertIncoming`: each
    /// id once in the conversation, the author's undecryptable ids struck off. A Delivered
    /// receipt is owed to the author for each new message from the moment this commits (by
    /// its position: `deliveredReceiptsOwed`). Returns the messages newly stored, in order,
    /// with their rows and positions.
    ///
    /// The rows go in up to 64 to a statement, with rowids and positions given here, under
    /// the write lock this transaction holds. One statement per row cost a third more (each
    /// opens cursors and a statement journal). When an id is already stored, the batch goes
    /// in again without it, after a lookup 64 ids to a query (`insertAssumingNew`).
    public func insertIncoming(conversation: ConversationID, author: ContactID, _ messages: [IncomingMessage],
                               at now: Int64) throws -> [StoredIncoming] {
        try insertIncoming(Incoming(conversation: conversation, author: author, unknown: .unknownConversation(conversation)), messages, at: now)
    }

    /// What `contact` wrote in their direct conversation (`insertIncoming(conversation:author:…)`).
    public func insertIncoming(contact: ContactID, _ messages: [IncomingMessage], at now: Int64) throws -> [StoredIncoming] {
        try insertIncoming(Incoming(conversation: contact.conversation, author: contact, unknown: .unknownContact(contact)), messages, at: now)
    }

    private func insertIncoming(_ to: Incoming, _ messages: [IncomingMessage], at now: Int64) throws -> [StoredIncoming] {
        guard !messages.isEmpty else { return [] }
        // A message deleted when its time ran out never comes back (a resend, a replay).
        let expired = try expiredIDs(conversation: to.conversation, among: messages.map(\.id))
        let messages = expired.isEmpty ? messages : messages.filter { !expired.contains($0.id) }
        guard !messages.isEmpty else { return [] }
        return try atomically {
            // Almost always every message of a batch is new: they go in at once, and the ids
            // already stored are looked up only when the unique index refuses one (a replay,
            // a resend that crossed the first copy). The lookup was a tenth of the engine's time.
            if let stored = try insertAssumingNew(to, messages, at: now) { return stored }
            var seen = try storedIDs(conversation: to.conversation, among: messages.map(\.id))
            let fresh = messages.filter { seen.insert($0.id).inserted }  // a copy twice in the batch: once
            return try insertRows(to, fresh, at: now)
        }
    }

    /// Inserts `messages` if none is stored yet and none is in the batch twice; nil (and
    /// nothing written) otherwise.
    private func insertAssumingNew(_ to: Incoming, _ messages: [IncomingMessage], at now: Int64) throws -> [StoredIncoming]? {
        var ids = Set<MessageID>(minimumCapacity: messages.count)
        for m in messages where !ids.insert(m.id).inserted { return nil }
        do {
            return try database.savepoint { try insertRows(to, messages, at: now) }
        } catch let error as DatabaseError where error.isUniqueViolation {
            return nil
        }
    }

    private func insertRows(_ to: Incoming, _ fresh: [IncomingMessage], at now: Int64) throws -> [StoredIncoming] {
        guard !fresh.isEmpty else { return [] }
        let firstPosition = try nextPosition(to.conversation)
        let firstRow = (try database.queryOne("SELECT max(rowid) FROM messages")?.optionalInt64(at: 0) ?? 0) + 1
        try translatingConstraints(foreignKey: to.unknown) {
            var offset = 0
            while offset < fresh.count {
                let rows = BatchSQL.chunk(fresh.count - offset)
                var args: [SQLValue] = []
                args.reserveCapacity(rows * 10)
                for i in offset..<(offset + rows) {
                    let m = fresh[i]
                    args.append(contentsOf: [.integer(firstRow + Int64(i)), .integer(to.conversation.rawValue), .integer(to.author.rawValue),
                                             .blob(m.id.bytes), .blob(m.encodedContent), .integer(m.sentAt), .integer(now), SQLValue(m.seq),
                                             .integer(firstPosition + Int64(i)), SQLValue(m.content.actionTarget.map(\.bytes))])
                }
                try database.execute(IncomingSQL.insert[rows]!, args)
                offset += rows
            }
        }
        try indexForSearch(fresh.enumerated().map { (firstRow + Int64($0), $1.content) })
        try database.execute("UPDATE conversation_members SET last_incoming_position = ? WHERE conversation_id = ? AND contact_id = ?",
                             [.integer(firstPosition + Int64(fresh.count) - 1), .integer(to.conversation.rawValue),
                              .integer(to.author.rawValue)])
        guard database.changes == 1 else { throw to.unknown }
        if try database.queryOne("SELECT 1 FROM undecryptable WHERE contact_id = ? LIMIT 1", [.integer(to.author.rawValue)]) != nil {
            for m in fresh {
                try database.execute("DELETE FROM undecryptable WHERE contact_id = ? AND id = ?",
                                     [.integer(to.author.rawValue), .blob(m.id.bytes)])
            }
        }
        return fresh.enumerated().map { StoredIncoming(id: $1.id, row: MessageRowID(firstRow + Int64($0)), position: firstPosition + Int64($0)) }
    }

    /// Which of `ids` the conversation's messages already hold.
    private func storedIDs(conversation: ConversationID, among ids: [MessageID]) throws -> Set<MessageID> {
        var found: Set<MessageID> = []
        try BatchSQL.forEachList(ids) { part in
            let args = [.integer(conversation.rawValue)] + BatchSQL.padded(part.map { .blob($0.bytes) })
            for row in try database.query(IncomingSQL.storedIDs, args) { found.insert(try row.messageID("id", table: "messages")) }
        }
        return found
    }
}

/// Where a batch goes: the conversation, its author (a member), and what to say when either
/// is not there.
private struct Incoming {
    let conversation: ConversationID
    let author: ContactID
    let unknown: StoreError
}

/// The statements of the batch insert, built once.
private enum IncomingSQL {
    static let storedIDs = "SELECT id FROM messages WHERE conversation_id = ? AND id IN " + BatchSQL.inList
    static let insert = BatchSQL.inserts(
        "INSERT INTO messages (rowid, conversation_id, author_id, id, direction, content, created_at, received_at, seq, position, target)",
        row: "(?, ?, ?, ?, 'in', ?, ?, ?, ?, ?, ?)")
}
