import RChatCore

extension ChatView {
    /// A banner for messages in conversations that are not on screen, worded by the alert
    /// setting, and one bell for them with `bell on`. Muted and blocked contacts stay
    /// quiet; a request never shows name or text.
    func showBanner(for messages: [(conversation: ConversationID, preview: String)]) {
        let loud = messages.filter { m in
            let state = self.state.summary(m.conversation)?.state
            return state != .muted && state != .blocked
        }
        guard let last = loud.last else { return }
        if settings.bell { request(.bell) }
        let summary = state.summary(last.conversation)
        let name = summary?.name ?? "rChat"
        let text: String
        if loud.count > 1 {
            text = "\(loud.count) new messages"
        } else if summary?.state == .request {
            text = "New message request"
        } else {
            switch settings.alerts {
            case .name: text = "\(name): New message"
            case .nothing: text = "rChat: New message"
            case .message: text = "\(name): \(Self.cleaned(last.preview))"
            }
        }
        state.banner = Banner(text: text, until: state.now + options.bannerSeconds)
    }

    /// The first 100 characters of a message on one line.
    static func cleaned(_ text: String) -> String {
        let flat = text.map { $0.isNewline || $0.unicodeScalars.allSatisfy({ $0.properties.generalCategory == .control }) ? " " : $0 }
        let words = String(flat).split(whereSeparator: { $0 == " " })
        return String(words.joined(separator: " ").prefix(100))
    }
}
