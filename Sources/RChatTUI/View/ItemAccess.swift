import RChatCore

extension ConversationItem {
    /// When the item happened, whatever it is.
    var at: Int64 {
        switch self {
        case .message(let m): m.at
        case .row(let r): r.at
        }
    }

    var message: MessageItem? { if case .message(let m) = self { m } else { nil } }

    /// What names the item whatever its status or text: its message id or row id.
    var key: ItemKey {
        switch self {
        case .message(let m): .message(m.id)
        case .row(let r): .row(r.id)
        }
    }
}

/// An item's identity in its conversation.
enum ItemKey: Hashable {
    case message(MessageID)
    case row(Int64)
}
