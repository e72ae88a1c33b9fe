import RChatCore
import RChatSQL

extension StoreAccess {
    static var contactColumns: String {
        """
        id, name, account_key, device_key, device_certificate, relay_address, invite_token,
        state, blocked, muted, deleted, rotation_acknowledged, keys_changed_at, added_at, code, kind, previous_account_key
        """
    }

    /// Adds a contact with its keys pinned. Throws `contactNameTaken` when the name is in
    /// use (compared case-insensitively, deleted contacts included).
    @discardableResult
    public func addContact(_ new: NewContact, at now: Int64) throws -> Contact {
        try atomically {
            try translatingConstraints(unique: .contactNameTaken(new.name)) {
                try database.execute("""
                    INSERT INTO contacts (name, name_key, account_key, device_key, device_certificate,
                        relay_address, invite_token, state, keys_changed_at, added_at, code, kind)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, [.text(new.name), .text(Self.nameKey(new.name, kind: new.kind, accountKey: new.accountKey)), .blob(new.accountKey),
                          .blob(new.deviceKey), .blob(new.deviceCertificate), SQLValue(new.relayAddress),
                          SQLValue(new.inviteToken), .text(new.state.rawValue), .integer(now), .integer(now),
                          SQLValue(new.code), .text(new.kind.rawValue)])
            }
            let id = ContactID(database.lastInsertRowID)
            guard let contact = try contact(id: id) else { throw StoreError.unknownContact(id) }
            return contact
        }
    }

    public func contact(id: ContactID) throws -> Contact? {
        try database.queryOne("SELECT \(Self.contactColumns) FROM contacts WHERE id = ?", [.integer(id.rawValue)])
            .map(Self.decodeContact)
    }

    /// The contact with this name, compared case-insensitively; deleted ones included
    /// (check `isDeleted`), since a deleted contact's name stays taken.
    public func contact(named name: String) throws -> Contact? {
        try database.queryOne("SELECT \(Self.contactColumns) FROM contacts WHERE name_key = ?",
                              [.text(Contact.nameKey(name))]).map(Self.decodeContact)
    }

    /// The contact (deleted or not) who has `accountKey` pinned; an indexed look-up.
    public func contact(accountKey: [UInt8]) throws -> Contact? {
        try database.queryOne("SELECT \(Self.contactColumns) FROM contacts WHERE account_key = ? ORDER BY id LIMIT 1",
                              [.blob(accountKey)]).map(Self.decodeContact)
    }

    /// The contact (deleted or not) who has `accountKey` pinned, else the one who rotated
    /// away from it: how a group's roster, which may name someone by the key they had before
    /// (its rekey not taken yet), finds them.
    public func contact(anyAccountKey key: [UInt8]) throws -> Contact? {
        if let pinned = try contact(accountKey: key) { return pinned }
        return try database.queryOne("SELECT \(Self.contactColumns) FROM contacts WHERE previous_account_key = ? ORDER BY id LIMIT 1",
                                     [.blob(key)]).map(Self.decodeContact)
    }

    /// Contacts by name (case-insensitively), without the deleted ones unless asked, and
    /// without the people known only from a group unless asked (the engine's channels).
    public func contacts(includingDeleted: Bool = false, includingMembers: Bool = false) throws -> [Contact] {
        try database.query("""
            SELECT \(Self.contactColumns) FROM contacts
            WHERE (deleted = 0 OR ?) AND (kind = 'contact' OR ?) ORDER BY name_key
            """, [SQLValue(includingDeleted), SQLValue(includingMembers)]).map(Self.decodeContact)
    }

    /// A member's key never equals a name's (`SchemaGroups`): U+0001, then the account key.
    static func nameKey(_ name: String, kind: Contact.Kind, accountKey: [UInt8]) -> String {
        kind == .contact ? Contact.nameKey(name) : "\u{1}" + Hex.encode(accountKey)
    }

    /// The code entered again, or for the first time since rChat keeps it.
    public func setCode(contact id: ContactID, _ code: String?) throws {
        try updateContact(id, "code = ?", [SQLValue(code)])
    }

    /// A person known from a group is added as a contact (their code entered): named, listed,
    /// with the one-to-one conversation every contact has.
    public func makeContact(member id: ContactID, name: String, at now: Int64) throws {
        try atomically {
            guard let current = try contact(id: id), current.kind == .member else { throw StoreError.unknownContact(id) }
            try translatingConstraints(unique: .contactNameTaken(name)) {
                try updateContact(id, "name = ?, name_key = ?, kind = 'contact'", [.text(name), .text(Contact.nameKey(name))])
            }
            try database.execute("INSERT INTO conversations (id, kind, created_at) VALUES (?, 'direct', ?)", [.integer(id.rawValue), .integer(now)])
            try database.execute("INSERT INTO conversation_members (conversation_id, contact_id) VALUES (?, ?)",
                                 [.integer(id.rawValue), .integer(id.rawValue)])
        }
    }

    /// Pins new keys (the contact's code entered again, "scan in person"). Returns whether
    /// a key changed; only then does `keysChangedAt` move.
    @discardableResult
    public func updatePinnedKeys(contact id: ContactID, accountKey: [UInt8], deviceKey: [UInt8],
                                 deviceCertificate: [UInt8], rotated: Bool = false, at now: Int64) throws -> Bool {
        try atomically {
            guard let current = try contact(id: id) else { throw StoreError.unknownContact(id) }
            let changed = current.accountKey != accountKey || current.deviceKey != deviceKey
            // A rotation remembers the key it left (`contact(anyAccountKey:)`).
            let previous = rotated && current.accountKey != accountKey ? current.accountKey : current.previousAccountKey
            try database.execute("""
                UPDATE contacts SET account_key = ?, device_key = ?, device_certificate = ?,
                    keys_changed_at = CASE WHEN ? THEN ? ELSE keys_changed_at END, previous_account_key = ?
                WHERE id = ?
                """, [.blob(accountKey), .blob(deviceKey), .blob(deviceCertificate), SQLValue(changed),
                      .integer(now), SQLValue(previous), .integer(id.rawValue)])
            return changed
        }
    }

    public func setState(contact id: ContactID, _ state: ContactState) throws {
        try updateContact(id, "state = ?", [.text(state.rawValue)])
    }

    public func setBlocked(contact id: ContactID, _ blocked: Bool) throws {
        try updateContact(id, "blocked = ?", [SQLValue(blocked)])
    }

    public func setMuted(contact id: ContactID, _ muted: Bool) throws {
        try updateContact(id, "muted = ?", [SQLValue(muted)])
    }

    /// Deleting keeps the row (messages refer to it) and the name; undeleting restores it.
    /// Whether the contact has accepted our current account key (see `keys rotate`).
    public func setRotationAcknowledged(contact id: ContactID, _ acknowledged: Bool) throws {
        try updateContact(id, "rotation_acknowledged = ?", [SQLValue(acknowledged)])
    }

    /// After `keys rotate`: every contact has yet to accept the new key.
    public func resetRotationAcknowledgements() throws {
        try database.execute("UPDATE contacts SET rotation_acknowledged = 0")
    }

    public func setDeleted(contact id: ContactID, _ deleted: Bool) throws {
        try updateContact(id, "deleted = ?", [SQLValue(deleted)])
    }

    /// The invite token their code carries (a new install has a new one).
    public func setInviteToken(contact id: ContactID, _ token: [UInt8]?) throws {
        try updateContact(id, "invite_token = ?", [SQLValue(token)])
    }

    public func setRelayAddress(contact id: ContactID, _ address: String?) throws {
        try updateContact(id, "relay_address = ?", [SQLValue(address)])
    }

    public func rename(contact id: ContactID, to name: String) throws {
        try translatingConstraints(unique: .contactNameTaken(name)) {
            try updateContact(id, "name = ?, name_key = ?", [.text(name), .text(Contact.nameKey(name))])
        }
    }

    /// `rchat accept REQUEST --replace CONTACT`: the request's messages, rows and alerts join
    /// `contact`'s conversation after what it holds, in their order (a message keeps its rowid,
    /// so its search entry and file stay), and the request's contact row goes. A message id
    /// the conversation holds already is kept once. Delivered receipts are owed for what
    /// joined, as for anything stored after the contact's receipted position.
    public func mergeRequest(_ request: ContactID, into contact: ContactID) throws {
        try atomically {
            var position = try nextPosition(contact: contact)
            let items = try database.query("""
                SELECT 'message' AS kind, rowid AS item, position FROM messages WHERE conversation_id = ?1
                UNION ALL SELECT 'row', id, position FROM system_rows WHERE conversation_id = ?1
                ORDER BY position
                """, [.integer(request.rawValue)])
            for item in items {
                if try item.string("kind") == "message" {
                    // Written by the request: by the contact now.
                    try database.execute("""
                        UPDATE OR IGNORE messages SET conversation_id = ?1, author_id = CASE WHEN author_id IS NULL THEN NULL ELSE ?1 END,
                            position = ?2
                        WHERE rowid = ?3
                        """, [.integer(contact.rawValue), .integer(position), .integer(try item.int64("item"))])
                } else {
                    try database.execute("""
                        UPDATE OR IGNORE system_rows SET conversation_id = ?1, member_id = CASE WHEN member_id IS NULL THEN NULL ELSE ?1 END,
                            position = ?2
                        WHERE id = ?3
                        """, [.integer(contact.rawValue), .integer(position), .integer(try item.int64("item"))])
                }
                position += 1
            }
            // The deliveries of what moved go to the contact.
            for table in ["message_status", "status_log", "outbox"] {
                try database.execute("""
                    UPDATE OR IGNORE \(table) SET member_id = ?1
                    WHERE member_id = ?2 AND message_rowid IN (SELECT rowid FROM messages WHERE conversation_id = ?1)
                    """, [.integer(contact.rawValue), .integer(request.rawValue)])
            }
            try database.execute("""
                UPDATE conversation_members SET last_incoming_position =
                    coalesce((SELECT max(position) FROM messages WHERE conversation_id = ?1 AND direction = 'in' AND author_id = ?1), 0)
                WHERE conversation_id = ?1 AND contact_id = ?1
                """, [.integer(contact.rawValue)])
            try database.execute("UPDATE alerts SET conversation_id = ? WHERE conversation_id = ?", [.integer(contact.rawValue), .integer(request.rawValue)])
            // What stayed behind (a message id the conversation holds already) goes with the request.
            for table in ["messages", "system_rows"] {
                try database.execute("DELETE FROM \(table) WHERE conversation_id = ?", [.integer(request.rawValue)])
            }
            for table in ["message_status", "status_log", "outbox"] {
                try database.execute("DELETE FROM \(table) WHERE member_id = ?", [.integer(request.rawValue)])
            }
            for table in ["session_state", "undecryptable"] {
                try database.execute("DELETE FROM \(table) WHERE contact_id = ?", [.integer(request.rawValue)])
            }
            // Its direct conversation goes with it (a trigger), and its drafts and expired ids with that.
            try database.execute("DELETE FROM contacts WHERE id = ?", [.integer(request.rawValue)])
        }
    }

    private func updateContact(_ id: ContactID, _ assignments: String, _ args: [SQLValue]) throws {
        try database.execute("UPDATE contacts SET \(assignments) WHERE id = ?", args + [.integer(id.rawValue)])
        guard database.changes == 1 else { throw StoreError.unknownContact(id) }
    }

    static func decodeContact(_ row: Row) throws -> Contact {
        Contact(id: try row.contactID("id"), name: try row.string("name"),
                accountKey: try row.blob("account_key"), deviceKey: try row.blob("device_key"),
                deviceCertificate: try row.blob("device_certificate"),
                relayAddress: try row.optionalString("relay_address"),
                inviteToken: try row.optionalBlob("invite_token"),
                state: try row.enumValue("state", table: "contacts", as: ContactState.self),
                isBlocked: try row.bool("blocked"), isMuted: try row.bool("muted"), isDeleted: try row.bool("deleted"),
                rotationAcknowledged: try row.bool("rotation_acknowledged"),
                keysChangedAt: try row.int64("keys_changed_at"), addedAt: try row.int64("added_at"),
                code: try row.optionalString("code"), kind: try row.enumValue("kind", table: "contacts", as: Contact.Kind.self),
                previousAccountKey: try row.optionalBlob("previous_account_key"))
    }
}
