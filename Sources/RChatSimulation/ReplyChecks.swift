import RChatCore
import RChatEngine

/// Replies in the simulation (issue 31): which message each reply written quotes. After
/// every whole check, each reply a conversation shows names the message it was written to
/// quote, and shows that message's words exactly when this side holds it there (else says it
/// has none); a message written as no reply never shows as one.
struct ReplyChecks {
    private(set) var quotes: [MessageID: MessageID] = [:]

    mutating func wrote(_ id: MessageID, quoting target: MessageID) { quotes[id] = target }

    /// What is wrong with the replies of one conversation as `name` shows it (its whole list).
    func wrongs(in items: [ConversationItem], of name: String) -> [String] {
        // What this side holds and shows (a message deleted for everyone is held no more).
        let held = Set(items.compactMap { item -> MessageID? in if case .message(let m) = item, !m.isUnsent { m.id } else { nil } })
        var out: [String] = []
        for case .message(let m) in items where !m.isUnsent {
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
            if case .message(let m) = item, !m.showsAsRow, !m.isUnsent { m.id } else { nil }
        }
        return messages.randomElement(using: &random)
    }
}

/// Reactions in the simulation (issue 31): each person's latest reaction item to each
/// message, by the install that wrote it and where (`contact`: to whom, one-to-one; nil: the
/// group). At the end: every member who stored a person's latest reaction to a message they
/// hold shows that reaction, or none for one taken back — the same on every side.
struct ReactionChecks {
    struct Latest {
        let item: MessageID
        let install: Int
        let contact: String?
    }

    private(set) var latest: [MessageID: [String: Latest]] = [:]

    mutating func reacted(_ item: MessageID, by account: SimulatedAccount, to target: MessageID, with contact: String?) {
        latest[target, default: [:]][account.name] = Latest(item: item, install: account.installs, contact: contact)
    }
}

extension SimulatedWorld {
    /// The conversation `account`'s current install holds with `contact` (nil: the group),
    /// as it shows it.
    fileprivate func shown(by account: SimulatedAccount, with contact: String?) throws -> (AccountService, ConversationID, [ConversationItem])? {
        let service = try account.commands(clock)
        if let contact {
            guard let c = try service.store.contact(named: contact), !c.isDeleted else { return nil }
            return (service, c.id.conversation, try service.conversation(c))
        }
        guard let (service, group) = try group(of: account) else { return nil }
        return (service, group.conversation, try service.conversation(group))
    }

    func reactionsDisagree() throws -> [String] {
        var wrong: [String] = []
        for (target, byReactor) in reactions.latest.sorted(by: { $0.key < $1.key }) {
            for (reactor, latest) in byReactor.sorted(by: { $0.key < $1.key }) {
                guard let account = accounts.first(where: { $0.name == reactor }), account.installs == latest.install,
                      let (service, conversation, _) = try shown(by: account, with: latest.contact),
                      let item = try service.store.message(conversation: conversation, id: latest.item),
                      case .control(.reaction(_, let emoji, _)) = item.content else { continue }
                for d in try service.store.deliveries(message: item.rowID) where d.status.isFinal {
                    guard let member = try service.store.contact(id: d.member)?.name,
                          let other = accounts.first(where: { $0.name == member }),
                          let (theirs, theirConversation, items) = try shown(by: other, with: latest.contact == nil ? nil : reactor),
                          try theirs.store.message(conversation: theirConversation, id: latest.item) != nil,
                          let message = items.compactMap({ entry -> MessageItem? in
                              if case .message(let m) = entry, m.id == target { m } else { nil }
                          }).first else { continue }
                    let theirView = message.reactions.first { $0.from == reactor }?.emoji
                    if theirView != emoji {
                        wrong.append("\(member) shows \(reactor)'s reaction to \(target.hex) as \(theirView ?? "none"), "
                                     + "though they stored \(reactor)'s latest, \(emoji ?? "taken back") (\(latest.item.hex))")
                    }
                }
            }
        }
        return wrong
    }
}

/// Edits and deletes for everyone in the simulation (issue 31): for each message its author
/// changed, the texts it had and the items that changed it, by the install that wrote them
/// and where (`contact`: to whom, one-to-one; nil: the group). At the end, every member who
/// holds the message shows what its author shows when they hold every change of it; one that
/// holds only some shows one of its texts; deleted when they stored the delete, never
/// when its author did not delete it.
struct EditChecks {
    struct Changed {
        let author: String
        let install: Int
        let contact: String?
        var texts: [String]
        var items: [MessageID] = []
        var unsend: MessageID?
    }

    private(set) var changed: [MessageID: Changed] = [:]

    mutating func edited(_ target: MessageID, original: String, to text: String, item: MessageID, by account: SimulatedAccount,
                         with contact: String?) {
        var c = changed[target] ?? Changed(author: account.name, install: account.installs, contact: contact, texts: [original])
        c.texts.append(text)
        c.items.append(item)
        changed[target] = c
    }

    mutating func unsent(_ target: MessageID, item: MessageID, by account: SimulatedAccount, with contact: String?) {
        var c = changed[target] ?? Changed(author: account.name, install: account.installs, contact: contact, texts: [])
        c.items.append(item)
        c.unsend = item
        changed[target] = c
    }
}

extension SimulatedWorld {
    /// `account` edits (four times in five) or deletes for everyone one of its own messages
    /// in a conversation it holds, if it has one it still may.
    func change(_ account: SimulatedAccount, _ service: AccountService, in conversation: ConversationTarget, items: [ConversationItem],
                with contact: String?) throws {
        let own = items.compactMap { item -> MessageItem? in
            if case .message(let m) = item, m.direction == .outgoing, !m.showsAsRow, !m.isUnsent, !m.content.isAttachment { m } else { nil }
        }
        guard let m = own.randomElement(using: &itemRandom) else { return }
        do {
            if itemRandom.chance(0.8), EditPolicy.isEditable(m.content) {
                let original = m.versions.first?.text ?? m.text
                let text = "\(original) (edit \(max(1, m.versions.count)))"
                let item = try service.edit(in: conversation, id: m.id, text: text)
                edits.edited(m.id, original: original, to: text, item: item, by: account, with: contact)
                trace.note("\(account.name) edits \(m.id.hex): \(item.hex)")
            } else {
                let item = try service.unsend(in: conversation, id: m.id)
                edits.unsent(m.id, item: item, by: account, with: contact)
                trace.note("\(account.name) deletes \(m.id.hex) for everyone: \(item.hex)")
            }
        } catch {
            trace.note("\(account.name) cannot change \(m.id.hex): \(error)")
        }
    }

    func editsDisagree() throws -> [String] {
        var wrong: [String] = []
        for (target, c) in edits.changed.sorted(by: { $0.key < $1.key }) {
            guard let author = accounts.first(where: { $0.name == c.author }), author.installs == c.install,
                  let (_, _, authorItems) = try shown(by: author, with: c.contact),
                  let mine = Self.message(target, in: authorItems) else { continue }
            for other in accounts where other !== author && (c.contact == nil || other.name == c.contact) {
                guard let (theirs, conversation, items) = try shown(by: other, with: c.contact == nil ? nil : c.author),
                      let shown = Self.message(target, in: items) else { continue }
                let held = try c.items.filter { try theirs.store.message(conversation: conversation, id: $0) != nil }
                let holdsUnsend = c.unsend.map(held.contains) ?? false
                // Deleted while still queued for them, it came as the deleted mark: deleted
                // without the delete (seed 161).
                if shown.isUnsent ? c.unsend == nil : holdsUnsend {
                    wrong.append("\(other.name) shows \(target.hex) \(shown.isUnsent ? "deleted" : "not deleted"), "
                                 + "though \(c.author) \(holdsUnsend ? "deleted it and they stored the delete" : "never deleted it")")
                } else if !shown.isUnsent, held.count == c.items.count, shown.text != mine.text {
                    wrong.append("\(other.name) shows \(target.hex) as \"\(shown.text)\", \(c.author) as \"\(mine.text)\", both holding every edit")
                } else if !shown.isUnsent, !c.texts.isEmpty, !c.texts.contains(shown.text) {
                    wrong.append("\(other.name) shows \(target.hex) as \"\(shown.text)\", none of its texts")
                }
            }
        }
        return wrong
    }

    private static func message(_ id: MessageID, in items: [ConversationItem]) -> MessageItem? {
        items.lazy.compactMap { item -> MessageItem? in if case .message(let m) = item, m.id == id { m } else { nil } }.first
    }
}
