import RChatCore
import RChatSQL

/// A message id that arrived but could not be read here (lost state), kept until the
/// sender has been told. Kept with the contact (its pairwise channel), not a conversation:
/// what could not be read does not say which conversation it was for and, ideally, the message arrives again readable.
public struct UndecryptableMessage: Equatable, Sendable {
    public let contact: ContactID
    public let id: MessageID
    public let receivedAt: Int64
    /// The sender was told (in a could-not-read notice).
    public let notified: Bool
}

extension StoreAccess {
    /// Records an unreadable id, with the session its copy came in; false if it was
    /// already recorded for that session. An unreadable copy in another session (the sender
    /// sent it again, and that copy is lost too) is recorded again, to be told again.
    @discardableResult
    public func recordUndecryptable(contact: ContactID, id: MessageID, session: [UInt8]? = nil, at now: Int64) throws -> Bool {
        try translatingConstraints(foreignKey: .unknownContact(contact)) {
            // A message this side already stored is never "couldn't be decrypted": an unreadable
            // copy of it is a replay (a relay handing over again what it sent before).
            try database.execute("""
                INSERT INTO undecryptable (contact_id, id, received_at, session)
                SELECT ?1, ?2, ?3, ?4 WHERE NOT EXISTS (SELECT 1 FROM messages WHERE conversation_id = ?1 AND id = ?2)
                ON CONFLICT (contact_id, id) DO UPDATE SET notified = 0, session = excluded.session, received_at = excluded.received_at
                WHERE excluded.session IS NOT NULL AND session IS NOT excluded.session
                """, [.integer(contact.rawValue), .blob(id.bytes), .integer(now), SQLValue(session)])
        }
        return database.changes == 1
    }

    /// The unreadable ids from `contact`, oldest first; only those (not) yet notified when
    /// `notified` is given.
    public func undecryptable(contact: ContactID, notified: Bool? = nil) throws -> [UndecryptableMessage] {
        try database.query("""
            SELECT contact_id, id, received_at, notified FROM undecryptable
            WHERE contact_id = ? AND (? IS NULL OR notified = ?) ORDER BY received_at, id
            """, [.integer(contact.rawValue), SQLValue(notified.map { Int64($0 ? 1 : 0) }),
                  SQLValue(notified.map { Int64($0 ? 1 : 0) })]).map { row in
            UndecryptableMessage(contact: try row.contactID("contact_id"), id: try row.messageID("id", table: "undecryptable"),
                                 receivedAt: try row.int64("received_at"), notified: try row.bool("notified"))
        }
    }

    public func markUndecryptableNotified(contact: ContactID, ids: [MessageID]) throws {
        try atomically {
            for id in ids {
                try database.execute("UPDATE undecryptable SET notified = 1 WHERE contact_id = ? AND id = ?",
                                     [.integer(contact.rawValue), .blob(id.bytes)])
            }
        }
    }
}

extension StoreAccess {
    /// Notes that the could-not-read notice with this digest was acted on; false if it was
    /// already (a replay), and then nothing may be done for it. Kept as long as the contact:
    /// a session's receive key may open its notices for as long as the session lasted plus
    /// 72 hours, and notices are rare (one per lost state).
    public func markNoticeRead(contact: ContactID, digest: [UInt8], at now: Int64) throws -> Bool {
        try translatingConstraints(foreignKey: .unknownContact(contact)) {
            try database.execute("""
                INSERT INTO notices_read (contact_id, digest, read_at) VALUES (?, ?, ?)
                ON CONFLICT (contact_id, digest) DO NOTHING
                """, [.integer(contact.rawValue), .blob(digest), .integer(now)])
        }
        return database.changes == 1
    }
}

/// What recovery keeps per contact across restarts (docs/PROTOCOL.md): whether this side owes the
/// contact its started-over notice, and whether the contact started over and its notice is
/// still to be read.
public struct RecoveryFlags: Equatable, Sendable {
    public var startedOverNoticeOwed: Bool
    public var peerStartedOver: Bool

    public init(startedOverNoticeOwed: Bool, peerStartedOver: Bool) {
        self.startedOverNoticeOwed = startedOverNoticeOwed
        self.peerStartedOver = peerStartedOver
    }
}

extension StoreAccess {
    public func recoveryFlags(contact: ContactID) throws -> RecoveryFlags {
        guard let row = try database.queryOne("""
            SELECT started_over_notice_owed, peer_started_over FROM contacts WHERE id = ?
            """, [.integer(contact.rawValue)]) else { throw StoreError.unknownContact(contact) }
        return RecoveryFlags(startedOverNoticeOwed: try row.int64(at: 0) != 0, peerStartedOver: try row.int64(at: 1) != 0)
    }

    public func setRecoveryFlags(contact: ContactID, _ flags: RecoveryFlags) throws {
        try database.execute("""
            UPDATE contacts SET started_over_notice_owed = ?, peer_started_over = ? WHERE id = ?
            """, [.integer(flags.startedOverNoticeOwed ? 1 : 0), .integer(flags.peerStartedOver ? 1 : 0), .integer(contact.rawValue)])
    }
}
