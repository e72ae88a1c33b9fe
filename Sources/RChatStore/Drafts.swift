import RChatCore
import RChatSQL

extension StoreAccess {
    /// The contact's kept draft, or nil when there is none.
    public func draft(contact: ContactID) throws -> Draft? { try draft(conversation: contact.conversation) }

    /// The conversation's kept draft (a contact's or a group's), or nil when there is none.
    public func draft(conversation: ConversationID) throws -> Draft? {
        guard let row = try database.queryOne("SELECT text, cursor FROM drafts WHERE conversation_id = ?",
                                              [.integer(conversation.rawValue)]) else { return nil }
        let text = try row.string("text")
        guard let draft = Draft(text: text, cursor: Int(try row.int64("cursor"))) else {
            throw StoreError.malformedValue(table: "drafts", column: "text", detail: "an empty draft")
        }
        return draft
    }

    /// Keeps `draft` as the contact's draft, replacing the one before; nil removes it (the
    /// composer was emptied or its text sent). Refused: a contact that is deleted or unknown
    /// (`unknownContact`), a draft over `Draft.maximumBytes` (`draftTooLong`).
    public func setDraft(_ draft: Draft?, contact: ContactID, at now: Int64) throws {
        try setDraft(draft, conversation: contact.conversation, at: now)
    }

    /// The same for a conversation: a contact's (not deleted) or a group's (`unknownConversation`).
    public func setDraft(_ draft: Draft?, conversation: ConversationID, at now: Int64) throws {
        guard let draft else {
            try database.execute("DELETE FROM drafts WHERE conversation_id = ?", [.integer(conversation.rawValue)])
            return
        }
        let bytes = draft.text.utf8.count
        guard bytes <= Draft.maximumBytes else { throw StoreError.draftTooLong(bytes: bytes, maximum: Draft.maximumBytes) }
        try atomically {
            if conversation.isGroup {
                guard try group(conversation) != nil else { throw StoreError.unknownConversation(conversation) }
            } else {
                let contact = ContactID(conversation)
                guard let known = try self.contact(id: contact), !known.isDeleted else { throw StoreError.unknownContact(contact) }
            }
            try database.execute("""
                INSERT INTO drafts (conversation_id, text, cursor, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (conversation_id) DO UPDATE SET text = excluded.text, cursor = excluded.cursor,
                    updated_at = excluded.updated_at
                """, [.integer(conversation.rawValue), .text(draft.text), .integer(Int64(draft.cursor)), .integer(now)])
        }
    }
}
