import RChatCore
import RChatStore

/// Reactions (issue 31): an item of its own (its id, a delivery to each member, statuses,
/// recovery) about a message of the conversation; each person's latest counts
/// (`ReactionPolicy`), and none changes its target's status.
extension AccountService {
    /// `rchat react NAME ID EMOJI` (nil: `--remove`, taking this side's back): to a message a
    /// person wrote in that conversation, still there. Refused in one line, nothing stored:
    /// what is not one emoji, an id not of that conversation, nothing to take back.
    @discardableResult
    public func react(in target: ConversationTarget, to id: MessageID, emoji: String?) throws(EngineError) -> MessageID {
        if let emoji, !ReactionPolicy.isEmoji(emoji) { throw .usage("a reaction is one emoji (\(TerminalText.sanitized(emoji, breaks: .shown)) is not)") }
        return try writeAction(in: target) { tx in
            // What a person wrote (an action is a control item: never reacted to).
            guard let message = try tx.message(conversation: target.conversation, id: id), Self.mayBeQuoted(message.content) else {
                throw EngineError.usage("no message \(id.hex) in \(target.name) to react to (see rchat list \(target.name))")
            }
            let items = try tx.actions(conversation: target.conversation, targets: [id])
            let current = Self.reactions(items)
            if emoji == nil, current[nil] == nil { throw EngineError.usage("you have not reacted to \(id.hex)") }
            let latest = items.compactMap { Self.reactionItem($0)?.order }.max { TimerPolicy.replaces($1, $0) }
            guard let counter = ReactionPolicy.next(after: latest) else {
                throw EngineError.usage("no more reactions can be made to \(id.hex)")
            }
            return .control(.reaction(target: id, emoji: emoji, counter: counter))
        }
    }

    /// Writes an action of this side (a reaction, an edit, a delete for everyone) in the
    /// conversation, as an item of its own to every member — one rule for a contact's
    /// conversation and a group's: `make` checks and says what it is, in the transaction that
    /// stores it; `then` applies it here, in the same transaction. Refused in one line,
    /// nothing stored.
    func writeAction(in target: ConversationTarget, _ make: (StoreTransaction) throws -> MessageContent,
                     then apply: (StoreTransaction) throws -> Void = { _ in }) throws(EngineError) -> MessageID {
        switch target {
        case .group(let group): try requireWritable(group)
        case .contact(let contact):
            guard contact.state != .request else {
                throw .usage("\(contact.name) is a message request: add their code to accept it before replying")
            }
        }
        let itemID = MessageID.fresh(clock)
        let t = clock.now()
        try Self.wrap {
            try store.transaction { tx in
                let content = try make(tx)
                switch target {
                case .group(let group):
                    _ = try insertGroupOutgoing(group, id: itemID, content: content, at: t, tx, timer: false)
                case .contact(let contact):
                    let row = try tx.insertOutgoing(contact: contact.id, id: itemID, content: content, at: t,
                                                    keysFingerprint: Self.keysFingerprint(contact))
                    try Self.failIfRefused(row, to: contact, at: t, tx)
                }
                try apply(tx)
            }
        }
        WakeSignal.poke(home: locations.home)
        return itemID
    }

    /// A stored reaction item as the policy takes it.
    static func reactionItem(_ m: StoredMessage) -> ReactionPolicy.Item? {
        guard case .control(.reaction(_, let emoji, let counter)) = m.content else { return nil }
        return ReactionPolicy.Item(emoji: emoji, order: TimerPolicy.Change(counter: counter, id: m.id))
    }

    /// Each person's reaction in force among one target's items (nil: this side).
    static func reactions(_ items: [StoredMessage]) -> [ContactID?: ReactionPolicy.Item] {
        ReactionPolicy.current(items.compactMap { m in reactionItem(m).map { (person: m.isOutgoing ? nil : m.author ?? m.contact, item: $0) } })
    }

    /// This side's reaction items' statuses, by item id.
    static func statuses(_ items: [StoredMessage]) -> [MessageID: MessageStatus] {
        Dictionary(items.compactMap { m in m.status.map { (m.id, $0) } }, uniquingKeysWith: { a, _ in a })
    }

    /// The actions about the messages of a page (reactions, edits, deletes), by target, in
    /// the order stored: read once for a page and folded into each message.
    static func actions(among stored: [StoredConversationItem], in conversation: ConversationID,
                        _ store: some StoreAccess) throws -> [MessageID: [StoredMessage]] {
        let ids = stored.compactMap { item -> MessageID? in if case .message(let m) = item { m.id } else { nil } }
        var byTarget: [MessageID: [StoredMessage]] = [:]
        for item in try store.actions(conversation: conversation, targets: ids) {
            if let target = item.content.actionTarget { byTarget[target, default: []].append(item) }
        }
        return byTarget
    }

    /// The reactions of the messages of a page, by target: who reacted with what (names as
    /// this side knows them, "You" for its own), in the summary's order.
    static func reactions(among byTarget: [MessageID: [StoredMessage]],
                          name: (ContactID) throws -> String) throws -> [MessageID: [MessageItem.Reaction]] {
        var out: [MessageID: [MessageItem.Reaction]] = [:]
        for (target, items) in byTarget {
            let current = reactions(items)
            guard !current.isEmpty else { continue }
            let order = ReactionPolicy.summary(current).map(\.emoji)
            let statuses = statuses(items)
            var shown: [MessageItem.Reaction] = []
            for (person, item) in current {
                guard let emoji = item.emoji else { continue }
                shown.append(MessageItem.Reaction(from: try person.map(name) ?? "You", emoji: emoji,
                                                  status: person == nil ? statuses[item.order.id] : nil))
            }
            shown.sort { a, b in
                let ia = order.firstIndex(of: a.emoji) ?? 0, ib = order.firstIndex(of: b.emoji) ?? 0
                return ia != ib ? ia < ib : a.from < b.from
            }
            if !shown.isEmpty { out[target] = shown }
        }
        return out
    }
}
