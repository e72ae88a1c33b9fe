import RChatCore
import RChatStore

/// What a stored item does to the others of its conversation (issue 31): an action changes
/// its message if the message is here and the action may (`AccountService.actionApplies`),
/// else it goes; a message takes the actions that waited for it by the same rule. One path
/// for a contact's conversation and a group's.
extension Engine {
    /// `item`, just stored in `conversation` from `author`: applied. Returns whether it is
    /// shown as a new message (not an action, not a message deleted by a delete that waited).
    func itemStored(_ content: MessageContent, id: MessageID, in conversation: ConversationID, from author: ContactID,
                    _ tx: StoreTransaction, _ after: inout AfterCommit) throws -> Bool {
        if let target = content.actionTarget {
            guard let action = try tx.message(conversation: conversation, id: id) else { return false }
            if let message = try tx.message(conversation: conversation, id: target) {
                try apply(action, to: message, from: author, tx, &after)
            }
            return false
        }
        guard let message = try tx.message(conversation: conversation, id: id) else { return false }
        for action in try tx.actions(conversation: conversation, targets: [id]) where !action.isOutgoing {
            // Each on what the ones before it left (an edit after the delete applies to nothing).
            guard let current = try tx.message(conversation: conversation, id: id) else { break }
            try apply(action, to: current, from: action.author ?? action.contact, tx, &after)
        }
        return try !tx.isUnsent(conversation: conversation, id: message.id)
    }

    /// One received action on its message: kept and applied, or retired (its place kept).
    private func apply(_ action: StoredMessage, to message: StoredMessage, from author: ContactID,
                       _ tx: StoreTransaction, _ after: inout AfterCommit) throws {
        guard try AccountService.actionApplies(action.content, from: author, heldAt: action.createdAt, to: message, tx) else {
            log("\(action.content.itemWords) \(action.id.hex) dropped: it may not change message \(message.id.hex)")
            let notifications = try tx.retireAction(action.rowID)
            if !notifications.isEmpty { after.unsent.append(UnsentMessage(files: [], notifications: notifications)) }
            return
        }
        switch action.content {
        case .control(.edit):
            let notifications = try AccountService.applyEdits(to: message, tx)
            if !notifications.isEmpty { after.unsent.append(UnsentMessage(files: [], notifications: notifications)) }
        case .control(.unsend): after.unsent.append(try tx.unsend(message: message.rowID))
        default: break
        }
    }
}
