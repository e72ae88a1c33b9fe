import RChatCore

/// Replies in the simulation (issue 31): which message each reply written quotes. After
/// every whole check, each reply a conversation shows names the message it was written to
/// quote, and shows that message's words exactly when this side holds it there (else says it
/// has none); a message written as no reply never shows as one.
struct ReplyChecks {
    private(set) var quotes: [MessageID: MessageID] = [:]

    mutating func wrote(_ id: MessageID, quoting target: MessageID) { quotes[id] = target }

    /// What is wrong with the replies of one conversation as `name` shows it (its whole list).
    func wrongs(in items: [ConversationItem], of name: String) -> [String] {
        let held = Set(items.compactMap { item -> MessageID? in if case .message(let m) = item { m.id } else { nil } })
        var out: [String] = []
        for case .message(let m) in items {
            guard let target = quotes[m.id] else {
                if let named = m.content.quoted { out.append("\(name) shows \(m.id.hex) as a reply to \(named.hex), written as none") }
                continue
            }
            guard m.content.quoted == target else {
                out.append("\(name) shows \(m.id.hex) quoting \(m.content.quoted?.hex ?? "nothing"), written to quote \(target.hex)")
                continue
            }
            switch m.quote {
            case .message?:
                if !held.contains(target) { out.append("\(name) quotes \(target.hex) in \(m.id.hex) without holding it") }
            case .notFound?, .deleted?:
                if held.contains(target) { out.append("\(name) holds \(target.hex), yet \(m.id.hex) says it has none") }
            case nil:
                out.append("\(name) shows the reply \(m.id.hex) without its quote")
            }
        }
        return out
    }

    /// Of a conversation's messages, one a person wrote that a reply may quote, if any.
    static func quotable(_ items: [ConversationItem], using random: inout SimulationRandom) -> MessageID? {
        let messages = items.compactMap { item -> MessageID? in
            if case .message(let m) = item, !m.showsAsRow { m.id } else { nil }
        }
        return messages.randomElement(using: &random)
    }
}
