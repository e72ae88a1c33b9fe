import RChatSQL

/// A conversation's sealed session state: opaque bytes here, sealed and opened elsewhere.
public struct SealedState: Equatable, Sendable {
    public let sealed: [UInt8]
    public let updatedAt: Int64
}

extension StoreAccess {
    public func sealedState(contact: ContactID) throws -> SealedState? {
        guard let row = try database.queryOne("SELECT sealed, updated_at FROM session_state WHERE contact_id = ?",
                                              [.integer(contact.rawValue)]) else { return nil }
        return SealedState(sealed: try row.blob("sealed"), updatedAt: try row.int64("updated_at"))
    }

    /// Saves the state; call it inside `Store.transaction` with the messages it decrypted,
    /// so both commit together.
    public func putSealedState(contact: ContactID, sealed: [UInt8], at now: Int64) throws {
        try translatingConstraints(foreignKey: .unknownContact(contact)) {
            try database.execute("""
                INSERT INTO session_state (contact_id, sealed, updated_at) VALUES (?, ?, ?)
                ON CONFLICT (contact_id) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at
                """, [.integer(contact.rawValue), .blob(sealed), .integer(now)])
        }
    }

    public func removeSealedState(contact: ContactID) throws {
        try database.execute("DELETE FROM session_state WHERE contact_id = ?", [.integer(contact.rawValue)])
    }
}
