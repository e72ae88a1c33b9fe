import RChatCore
import RChatSQL

/// What a system row reports: the engine asks whether a row of a kind is there already.
/// Stored as text in `system_rows.kind`. A kind this version does not name (an earlier
/// rChat's) is kept as it is: the row still shows, and nothing asks for it.
public enum SystemRowKind: Equatable, Hashable, Sendable {
    case resentAutomatically
    case couldNotBeRead
    case couldNotDecrypt
    case startedOver
    /// One per device key, so each new device is announced once.
    case newDevice([UInt8])
    case keysChanged
    case keysDontMatch
    /// A received file whose hash did not match, discarded.
    case fileDiscarded
    /// The contact did not take in a file sent to them: one per message id.
    case fileRefused(MessageID)
    /// A message request from someone using this contact's name with other keys: one per
    /// requester's account key, so repeated requests add no second row.
    case namesakeRequest([UInt8])
    /// Written by an earlier rChat under a name this one does not use.
    case earlier(String)

    public var stored: String {
        switch self {
        case .resentAutomatically: "resent-automatically"
        case .couldNotBeRead: "could-not-be-read"
        case .couldNotDecrypt: "could-not-decrypt"
        case .startedOver: "started-over"
        case .newDevice(let key): "new-device \(Hex.encode(key))"
        case .keysChanged: "keys-changed"
        case .keysDontMatch: "keys-dont-match"
        case .fileDiscarded: "file-discarded"
        case .fileRefused(let id): "file-refused \(id.hex)"
        case .namesakeRequest(let key): "namesake-request \(Hex.encode(key))"
        case .earlier(let text): text
        }
    }

    public init(stored: String) {
        if stored.hasPrefix("new-device "), let key = Hex.decode(String(stored.dropFirst("new-device ".count))) {
            self = .newDevice(key)
            return
        }
        if stored.hasPrefix("file-refused "), let bytes = Hex.decode(String(stored.dropFirst("file-refused ".count))),
           let id = MessageID(bytes: bytes) {
            self = .fileRefused(id)
            return
        }
        if stored.hasPrefix("namesake-request "), let key = Hex.decode(String(stored.dropFirst("namesake-request ".count))) {
            self = .namesakeRequest(key)
            return
        }
        let plain: [SystemRowKind] = [.resentAutomatically, .couldNotBeRead, .couldNotDecrypt, .startedOver, .keysChanged,
                                      .keysDontMatch, .fileDiscarded]
        self = plain.first { $0.stored == stored } ?? .earlier(stored)
    }
}

/// A row in a conversation that is not a message (recovery notices), with the
/// messages it is about and, when offered, its Resend action. The stored form of Core's
/// `SystemRow` read model.
public struct StoredSystemRow: Equatable, Sendable {
    public let id: Int64
    /// The conversation's id as a contact's (a direct conversation's contact).
    public let contact: ContactID
    /// The member whose pairwise channel it is about (recovery rows); nil: the conversation.
    public let member: ContactID?
    /// What it reports, for the engine.
    public let kind: SystemRowKind
    /// The row exactly as shown.
    public let text: String
    public let action: SystemRow.Action?
    public let messageIDs: [MessageID]
    public let createdAt: Int64
    public let position: Int64
}

extension StoreAccess {
    static var systemRowColumns: String { "id, conversation_id, member_id, kind, text, action, message_ids, created_at, position" }

    /// Adds a row at the end of the conversation; `member`: the member whose channel it is
    /// about (nil: the conversation's).
    @discardableResult
    public func addSystemRow(conversation: ConversationID, member: ContactID?, kind: SystemRowKind, text: String,
                             action: SystemRow.Action?, messageIDs: [MessageID], at now: Int64) throws -> StoredSystemRow {
        try addSystemRow(conversation, member: member, kind: kind, text: text, action: action, messageIDs: messageIDs, at: now,
                         unknown: .unknownConversation(conversation))
    }

    /// A row of the contact's direct conversation, about them.
    @discardableResult
    public func addSystemRow(contact: ContactID, kind: SystemRowKind, text: String, action: SystemRow.Action?,
                             messageIDs: [MessageID], at now: Int64) throws -> StoredSystemRow {
        try addSystemRow(contact.conversation, member: contact, kind: kind, text: text, action: action, messageIDs: messageIDs, at: now,
                         unknown: .unknownContact(contact))
    }

    private func addSystemRow(_ conversation: ConversationID, member: ContactID?, kind: SystemRowKind, text: String,
                              action: SystemRow.Action?, messageIDs: [MessageID], at now: Int64,
                              unknown: StoreError) throws -> StoredSystemRow {
        try atomically {
            let position = try nextPosition(conversation)
            let rows = try translatingConstraints(foreignKey: unknown) {
                try database.query("""
                    INSERT INTO system_rows (conversation_id, member_id, kind, text, action, message_ids, created_at, position)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    RETURNING \(Self.systemRowColumns)
                    """, [.integer(conversation.rawValue), SQLValue(member?.rawValue), .text(kind.stored), .text(text),
                          SQLValue(action?.rawValue), .blob(messageIDs.flatMap(\.bytes)), .integer(now), .integer(position)])
            }
            return try Self.decodeSystemRow(rows[0])
        }
    }

    /// The position of the conversation's first row of `kind` added at `since` or later, if any.
    public func systemRowPosition(contact: ContactID, kind: SystemRowKind, since: Int64) throws -> Int64? {
        try systemRowPosition(conversation: contact.conversation, kind: kind, since: since)
    }

    /// The first row of this kind since `since` (about `member` only, when given).
    public func systemRowPosition(conversation: ConversationID, member: ContactID? = nil, kind: SystemRowKind, since: Int64) throws -> Int64? {
        try database.queryOne("""
            SELECT position FROM system_rows WHERE conversation_id = ? AND kind = ? AND created_at >= ? AND (?4 IS NULL OR member_id = ?4)
            ORDER BY position LIMIT 1
            """, [.integer(conversation.rawValue), .text(kind.stored), .integer(since), member.map { .integer($0.rawValue) } ?? .null])?
            .int64("position")
    }

    /// The keys of every device of the contact's that a handshake proved (certified by
    /// their pinned account key) but that is not pinned, as the rows announcing them record,
    /// added at `since` (their keys' last change) or later, newest first. They survive a
    /// restart: a could-not-read notice such a device signed may come when no link is up.
    public func newDeviceKeys(contact: ContactID, since: Int64) throws -> [[UInt8]] {
        try database.query("""
            SELECT kind FROM system_rows WHERE conversation_id = ? AND kind LIKE 'new-device %' AND created_at >= ?
            ORDER BY position DESC
            """, [.integer(contact.rawValue), .integer(since)]).compactMap { row -> [UInt8]? in
            guard case .newDevice(let key) = SystemRowKind(stored: try row.string("kind")) else { return nil }
            return key
        }
    }

    /// The position of the latest row announcing a device of the contact's that is not
    /// pinned ("Sam is using a new device…"), added at `since` (their keys' last change) or
    /// later: what was asked for before it waits (`SendPolicy`). nil: none.
    public func newDeviceRowPosition(contact: ContactID, since: Int64) throws -> Int64? {
        try database.queryOne("""
            SELECT position FROM system_rows WHERE conversation_id = ? AND kind LIKE 'new-device %' AND created_at >= ?
            ORDER BY position DESC LIMIT 1
            """, [.integer(contact.rawValue), .integer(since)])?.int64("position")
    }

    /// The contact's code entered again pins their device: the rows that asked for it go.
    /// A place they leave may be taken again, so what the outbox holds no longer counts as
    /// asked for below any row (`SendPolicy.Origin`): to the pinned device it goes all the
    /// same, and a later new device waits for it to be sent by hand again.
    public func removeNewDeviceRows(contact: ContactID) throws {
        try atomically {
            try database.execute("DELETE FROM system_rows WHERE conversation_id = ? AND kind LIKE 'new-device %'", [.integer(contact.rawValue)])
            // What waits to go through their channel, in every conversation.
            try database.execute("UPDATE outbox SET asked_at_position = NULL WHERE member_id = ?", [.integer(contact.rawValue)])
        }
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
    public func idsOfferedForResend(conversation: ConversationID) throws -> [MessageID] {
        try database.query("SELECT message_ids FROM system_rows WHERE conversation_id = ? AND action = 'resend'",
                           [.integer(conversation.rawValue)]).flatMap { try $0.messageIDs("message_ids", table: "system_rows") }
    }

    public func idsOfferedForResend(contact: ContactID) throws -> [MessageID] {
        try idsOfferedForResend(conversation: contact.conversation)
    }

    /// Withdraws Resend from this conversation's rows about any of `touched` once nothing
    /// of the row is left to resend: each of its messages is Delivered or Read, or was sent
    /// again after the row was added and is Sending or Sent since (`owesResend`). The row
    /// keeps its text. Called where those statuses change (Resend, receipts), in the same
    /// transaction, so every reader of `action` (the view, `rchat list`, `rchat resend`)
    /// sees the same; the UPDATE is a compare-and-set on the offer.
    func withdrawSettledResendOffers(conversation: ConversationID, touched: [MessageID]) throws {
        guard !touched.isEmpty else { return }
        let offers = try database.query("""
            SELECT id, member_id, message_ids, created_at FROM system_rows WHERE conversation_id = ? AND action = ?
            """, [.integer(conversation.rawValue), .text(SystemRow.Action.resend.rawValue)])
        guard !offers.isEmpty else { return }
        let touched = Set(touched)
        for offer in offers {
            let ids = try offer.messageIDs("message_ids", table: "system_rows")
            guard ids.contains(where: touched.contains) else { continue }
            let since = try offer.int64("created_at")
            let member = try offer.optionalInt64("member_id").map(ContactID.init)
            guard try ids.allSatisfy({ try !owesResend(conversation: conversation, member: member, id: $0, rowAddedAt: since) })
            else { continue }
            try database.execute("UPDATE system_rows SET action = NULL WHERE id = ? AND action = ?",
                                 [.integer(try offer.int64("id")), .text(SystemRow.Action.resend.rawValue)])
        }
    }

    /// Whether a row added at `rowAddedAt` still owes `id` a Resend: the message is neither
    /// Delivered/Read nor resent since (a Sending in its timeline after its first one, at or
    /// after the row's time, and Sending or Sent now — a later "not delivered" owes it
    /// again). A message no longer stored is owed nothing. Per delivery: the one to the
    /// row's member (nil: to any member).
    private func owesResend(conversation: ConversationID, member: ContactID?, id: MessageID, rowAddedAt: Int64) throws -> Bool {
        try database.queryOne("""
            SELECT 1 AS owed FROM messages AS m JOIN message_status AS s ON s.message_rowid = m.rowid
            WHERE m.conversation_id = ?1 AND m.id = ?2 AND (?8 IS NULL OR s.member_id = ?8) AND s.status NOT IN (?3, ?4)
              AND NOT (s.status IN (?5, ?6) AND EXISTS (
                  SELECT 1 FROM status_log AS l WHERE l.message_rowid = m.rowid AND l.member_id = s.member_id AND l.status = ?5 AND l.at >= ?7
                    AND l.rowid > (SELECT min(rowid) FROM status_log WHERE message_rowid = m.rowid AND member_id = s.member_id)))
            LIMIT 1
            """, [.integer(conversation.rawValue), .blob(id.bytes), .text(MessageStatus.delivered.rawValue), .text(MessageStatus.read.rawValue),
                  .text(MessageStatus.sending.rawValue), .text(MessageStatus.sent.rawValue), .integer(rowAddedAt),
                  SQLValue(member?.rawValue)]) != nil
    }

    static func decodeSystemRow(_ row: Row) throws -> StoredSystemRow {
        let action = try row.optionalString("action")
        let kind = SystemRowKind(stored: try row.string("kind"))
        return StoredSystemRow(id: try row.int64("id"), contact: try row.contactID("conversation_id"),
                         member: try row.optionalInt64("member_id").map(ContactID.init),
                         kind: kind, text: try row.string("text"),
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
