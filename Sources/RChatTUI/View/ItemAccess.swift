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
}
