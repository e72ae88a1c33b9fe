import Foundation
import RChatCore
import RChatStore

/// Edits and delete for everyone (issue 31): each an item of its own about a message of the
/// conversation (its id, a delivery to each member, statuses, recovery), by the message's
/// author only, within Signal's limits (`EditPolicy`, `UnsendPolicy`); neither changes its
/// target's status. The one rule for what a received one may do is `actionApplies`.
extension AccountService {
    /// `rchat edit NAME ID TEXT`: this side's text message (or reply) takes a new text, here
    /// at once and on every member's side as the edit arrives. Refused in one line, nothing
    /// stored: another's message, not a text, past 24 hours, past 10 edits, deleted, no text.
    @discardableResult
    public func edit(in target: ConversationTarget, id: MessageID, text: String) throws(EngineError) -> MessageID {
        try Self.checkWritten(.text(text))
        guard text.utf8.count <= EditPolicy.maximumTextBytes else { throw .usage("the new text is too long (\(text.utf8.count) bytes)") }
        let now = clock.now()
        return try writeAction(in: target) { tx in
            let message = try Self.actionTarget(id, in: target, verb: "edit", tx)
            if message.content == .unsent { throw EngineError.usage(EditPolicy.Refusal.deleted.description) }
            let edits = try Self.edits(of: message, tx)
            if let refusal = EditPolicy.refusal(outgoing: message.isOutgoing, isText: EditPolicy.isEditable(message.content),
                                                writtenAt: message.createdAt, edits: edits.count, now: now) {
                throw EngineError.usage(refusal.description)
            }
            guard let counter = EditPolicy.next(after: edits.map(\.order).max { TimerPolicy.replaces($1, $0) }) else {
                throw EngineError.usage(EditPolicy.Refusal.tooManyEdits.description)
            }
            return .control(.edit(target: id, text: text, counter: counter))
        } then: { tx in
            if let message = try tx.message(conversation: target.conversation, id: id) { try Self.applyEdits(to: message, tx) }
        }
    }

    /// `rchat unsend NAME ID`: this side's message is deleted for everyone — here at once
    /// (secure delete, its search entry, files and alerts), on every member's side as the
    /// delete arrives. Refused in one line, nothing stored: another's message, past 24 hours,
    /// deleted already, not a message.
    @discardableResult
    public func unsend(in target: ConversationTarget, id: MessageID) throws(EngineError) -> MessageID {
        let now = clock.now()
        var left: UnsentMessage?
        let item = try writeAction(in: target) { tx in
            let message = try Self.actionTarget(id, in: target, verb: "delete", tx)
            if let refusal = UnsendPolicy.refusal(outgoing: message.isOutgoing, content: message.content, writtenAt: message.createdAt, now: now) {
                throw EngineError.usage(refusal.description)
            }
            return .control(.unsend(target: id))
        } then: { tx in
            if let message = try tx.message(conversation: target.conversation, id: id) { left = try tx.unsend(message: message.rowID) }
        }
        if let left { try removeOutside([left]) }
        return item
    }

    /// What a message deleted for everyone leaves outside the store, once the delete committed:
    /// its files, its desktop alerts; then the index merged and the log truncated.
    func removeOutside(_ left: [UnsentMessage]) throws(EngineError) {
        let files = attachmentFiles
        for file in left.flatMap(\.files) { unlink(files.absolute(file)) }
        for notification in left.flatMap(\.notifications) { DesktopAlerts.close(notification) }
        try Self.wrap { try store.scrubDeleted() }
    }

    /// The message an action of this side is about: one of the conversation, else refused.
    static func actionTarget(_ id: MessageID, in target: ConversationTarget, verb: String, _ tx: StoreTransaction) throws -> StoredMessage {
        guard let message = try tx.message(conversation: target.conversation, id: id), message.content.actionTarget == nil else {
            throw EngineError.usage("no message \(id.hex) in \(target.name) to \(verb) (see rchat list \(target.name))")
        }
        return message
    }

    /// A message's edits by its author, as stored (each with its order and time).
    static func edits(of message: StoredMessage, _ store: some StoreAccess) throws -> [Edit] {
        try store.actions(conversation: message.conversation, targets: [message.id]).compactMap { edit($0, of: message) }
    }

    /// `action` as an edit of `message`: nil unless it is one, by the message's author.
    static func edit(_ action: StoredMessage, of message: StoredMessage) -> Edit? {
        guard case .control(.edit(_, let text, let counter)) = action.content, sameAuthor(action, message) else { return nil }
        return Edit(text: text, order: TimerPolicy.Change(counter: counter, id: action.id), at: action.createdAt, row: action.rowID)
    }

    /// An edit as stored: its text, its place in the order, when it was written, its row.
    struct Edit {
        let text: String
        let order: TimerPolicy.Change
        let at: Int64
        let row: MessageRowID
    }

    /// Whether two items of a conversation have one author (this side, or the same person).
    static func sameAuthor(_ a: StoredMessage, _ b: StoredMessage) -> Bool {
        a.direction == b.direction && (a.isOutgoing || (a.author ?? a.contact) == (b.author ?? b.contact))
    }

    /// The text in force of `message` from its edits (`EditPolicy.current`), given to the
    /// store and its search index; edits past the first 10 in the order are deleted (each
    /// keeping its place). Returns their notifications to close.
    @discardableResult
    static func applyEdits(to message: StoredMessage, _ tx: StoreTransaction) throws -> [Int64] {
        guard let original = message.content.writtenText else { return [] }
        let edits = try edits(of: message, tx)
        var notifications: [Int64] = []
        for surplus in EditPolicy.surplus(edits, order: \.order) { notifications += try tx.retireAction(surplus.row) }
        try tx.setCurrentText(edits.isEmpty ? nil : EditPolicy.current(original: original, edits: edits.map { ($0.text, $0.order) }),
                              message: message.rowID)
        return notifications
    }

    /// Whether a received action may do what it says to `target`, a message of its
    /// conversation that is here: an edit or a delete for everyone only from the message's
    /// author within the limits, a reaction only to a message still there. The one rule for
    /// an action that arrives after its message and one that waited for it.
    static func actionApplies(_ content: MessageContent, from author: ContactID, heldAt: Int64, to target: StoredMessage,
                              _ tx: StoreTransaction) throws -> Bool {
        let fromAuthor = !target.isOutgoing && (target.author ?? target.contact) == author
        switch content {
        case .control(.reaction): return mayBeQuoted(target.content)
        case .control(.edit):
            return EditPolicy.accepts(fromAuthor: fromAuthor, isText: EditPolicy.isEditable(target.content), originalHeldAt: target.createdAt,
                                      editHeldAt: heldAt)
        case .control(.unsend):
            return UnsendPolicy.accepts(fromAuthor: fromAuthor, content: target.content, originalHeldAt: target.createdAt, unsendHeldAt: heldAt)
        default: return true
        }
    }

    /// A page's edits and this side's pending edit or delete, by target: each version of an
    /// edited message's text (the original first), and this side's latest edit or its delete
    /// while it is not Delivered to everyone.
    static func edits(among stored: [StoredConversationItem], _ actions: [MessageID: [StoredMessage]])
        -> [MessageID: (versions: [MessageItem.Version], pending: MessageItem.PendingAction?)] {
        var out: [MessageID: (versions: [MessageItem.Version], pending: MessageItem.PendingAction?)] = [:]
        for case .message(let m) in stored {
            guard let items = actions[m.id] else { continue }
            var versions: [MessageItem.Version] = []
            if let original = m.content.writtenText {
                let edits = EditPolicy.counted(items.compactMap { edit($0, of: m) }, order: \.order)
                if !edits.isEmpty { versions = [.init(text: original, at: m.createdAt)] + edits.map { .init(text: $0.text, at: $0.at) } }
            }
            var pending: MessageItem.PendingAction?
            if m.isOutgoing {
                let own = items.filter { a in
                    switch a.content {
                    case .control(.edit), .control(.unsend): a.isOutgoing
                    default: false
                    }
                }
                if let last = own.max(by: { $0.position < $1.position }), let status = last.status, status != .delivered, status != .read {
                    let kind: MessageItem.PendingAction.Kind = if case .control(.unsend) = last.content { .delete } else { .edit }
                    pending = .init(kind: kind, status: status, id: last.id)
                }
            }
            if !versions.isEmpty || pending != nil { out[m.id] = (versions, pending) }
        }
        return out
    }
}
