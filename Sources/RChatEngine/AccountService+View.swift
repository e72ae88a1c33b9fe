import Foundation
import RChatCore
import RChatStore

/// What the full-screen view needs beyond the commands: messages marked shown one by one,
/// the conversation list as the view draws it, and a message's status timeline.
extension AccountService {
    /// The view drew these incoming messages: they are read now, and their Read receipts
    /// are owed from the same transaction (as `markRead` does for a whole conversation).
    /// Returns the ids that were unread until now.
    @discardableResult
    public func markShown(_ conversation: ConversationID, ids: [MessageID]) throws(EngineError) -> [MessageID] {
        guard !ids.isEmpty else { return [] }
        if conversation.isGroup {
            // A group's: each author is owed a Read receipt for theirs.
            let t = clock.now()
            let marked = try Self.wrap {
                try store.transaction { tx -> [MessageID] in
                    let marked = try tx.markRead(conversation: conversation, ids: ids, at: t)
                    if !marked.isEmpty { try tx.oweReadReceipts(conversation: conversation, ids: marked) }
                    try tx.startExpiry(conversation: conversation, ids: ids, at: t)
                    return marked
                }
            }
            if !marked.isEmpty { WakeSignal.poke(home: locations.home) }
            return marked
        }
        let contact = try contact(conversation)
        let t = clock.now()
        let marked = try Self.wrap {
            try store.transaction { tx -> [MessageID] in
                let marked = try tx.markRead(conversation: conversation, ids: ids, at: t)
                if contact.state == .ok, !marked.isEmpty {
                    try tx.oweReadReceipts(contact: contact.id, ids: marked)
                }
                // On screen: the clocks of disappearing messages start.
                try tx.startExpiry(contact: contact.id, ids: ids, at: t)
                return marked
            }
        }
        if !marked.isEmpty { WakeSignal.poke(home: locations.home) }
        return marked
    }

    /// The conversation's kept draft (what was typed in the view and not sent), or nil.
    public func draft(_ conversation: ConversationID) throws(EngineError) -> Draft? {
        if conversation.isGroup { return try Self.wrap { try store.draft(conversation: conversation) } }
        let contact = try contact(conversation)
        return try Self.wrap { try store.draft(contact: contact.id) }
    }

    /// Keeps the view's draft for the conversation (nil: none any more). No wake-up signal
    /// for other processes: only the view reads drafts.
    public func setDraft(_ draft: Draft?, for conversation: ConversationID) throws(EngineError) {
        let t = clock.now()
        if conversation.isGroup { return try Self.wrap { try store.setDraft(draft, conversation: conversation, at: t) } }
        let contact = try contact(conversation)
        try Self.wrap { try store.setDraft(draft, contact: contact.id, at: t) }
    }

    /// `rchat rename NAME NEW`, `/rename NEW`: a new display name for the conversation; its
    /// id, messages and rows stay. Refused (nothing changed): a name the contact-code rules
    /// refuse, or one another contact has (compared folded, as `rchat add` compares).
    public func rename(_ conversation: ConversationID, to name: String) throws(EngineError) {
        let contact = try contact(conversation)
        guard ContactCode.validName(name) else { throw .usage(ContactCode.nameRule) }
        try Self.wrap {
            try store.transaction { tx in
                if let other = try tx.contact(named: name), other.id != contact.id {
                    throw EngineError.usage("a contact named \(other.name) already exists; choose another name")
                }
                try tx.rename(contact: contact.id, to: name)
            }
        }
        WakeSignal.poke(home: locations.home)
    }

    /// The conversation list: every contact with its state, unread count and last activity,
    /// the most recent first.
    public func conversationSummaries() throws(EngineError) -> [ConversationSummary] {
        try Self.wrap {
            try (store.contacts().map { c in
                var summary = ConversationSummary(id: c.id.conversation, name: c.name, state: c.displayState,
                                                  unread: try store.unreadCount(contact: c.id),
                                                  lastActivity: max(try store.lastActivity(conversation: c.id.conversation), c.addedAt),
                                                  timer: try store.conversationTimer(contact: c.id).timer)
                summary.namesake = try namesake(of: c, in: store)?.id.conversation
                return summary
            }
            + store.groups().map { g in
                var summary = ConversationSummary(id: g.conversation, name: g.name, state: g.isBlocked ? .blocked : g.isMuted ? .muted : .ok,
                                                  unread: try store.unreadCount(conversation: g.conversation),
                                                  lastActivity: max(try store.lastActivity(conversation: g.conversation), g.createdAt),
                                                  timer: try store.conversationTimer(g.conversation).timer)
                summary.members = g.state == .current ? try store.members(g.conversation).count { $0.state == .current } + 1 : 0
                return summary
            })
            .sorted { ($0.lastActivity, $1.name, $1.id) > ($1.lastActivity, $0.name, $0.id) }
        }
    }

    /// Every status an outgoing message reached, with its time, in the view's words: the
    /// first Sending is "stored", Sent is "relay acknowledged", a later Sending is a resend.
    /// Empty for an incoming or unknown message.
    public func timeline(_ conversation: ConversationID, id: MessageID) throws(EngineError) -> [TimelineEntry] {
        if conversation.isGroup {
            // A group's: every member's timeline, member after member.
            return try Self.wrap {
                guard let message = try store.message(conversation: conversation, id: id), message.isOutgoing else { return [] }
                return try store.deliveries(message: message.rowID).flatMap { delivery -> [TimelineEntry] in
                    let name = try store.contact(id: delivery.member)?.name ?? "someone"
                    return Self.timeline(try store.statusLog(delivery.key)).map { TimelineEntry(step: $0.step, at: $0.at, member: name) }
                }
            }
        }
        let contact = try contact(conversation)
        return try Self.wrap {
            guard let message = try store.message(contact: contact.id, id: id), message.isOutgoing else { return [] }
            return Self.timeline(try store.statusLog(message: message.rowID))
        }
    }

    static func timeline(_ log: [StatusLogEntry]) -> [TimelineEntry] {
        var stored = false
        return log.map { entry in
            let step: TimelineEntry.Step
            switch entry.status {
            case .sending:
                step = stored ? .resent : .stored
                stored = true
            case .sent: step = .relayAcknowledged
            case .delivered: step = .delivered
            case .read: step = .read
            default: step = .status(entry.status)
            }
            return TimelineEntry(step: step, at: entry.at)
        }
    }
}

extension AccountService {
    /// `rchat search`, `/search`: the newest messages with every word, newest first (at most
    /// `SearchQuery.resultLimit`), in one conversation (one gone is a usage error) or in
    /// every one (nil).
    public func search(_ query: SearchQuery, in conversation: ConversationID? = nil) throws(EngineError) -> [SearchHit] {
        if let conversation {
            if conversation.isGroup {
                guard try Self.wrap({ try store.group(conversation) }) != nil else { throw .usage("that group no longer exists") }
            } else {
                _ = try contact(conversation)
            }
        }
        return try Self.wrap { try store.search(query, in: conversation) }
    }
}
