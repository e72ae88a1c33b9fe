import Foundation
import RChatCore
import RChatCrypto
import RChatStore

extension AccountService {
    /// Longest text a message may carry: it must fit one relay frame with its envelope.
    public static let maximumTextBytes = 60 * 1024

    /// The contact a command names; a clear usage error when there is none.
    public func contact(named name: String) throws(EngineError) -> Contact {
        guard let contact = try Self.wrap({ try store.contact(named: name) }), !contact.isDeleted else {
            throw .usage("no contact named \(name) (see rchat contacts)")
        }
        return contact
    }

    /// The contact a conversation is with (the view's way to pick one); a clear usage error
    /// when it is gone (deleted meanwhile, by another process).
    public func contact(_ conversation: ConversationID) throws(EngineError) -> Contact {
        guard let contact = try Self.wrap({ try store.contact(id: ContactID(conversation)) }), !contact.isDeleted else {
            throw .usage("that conversation no longer exists (see rchat contacts)")
        }
        return contact
    }

    /// `rchat send`: the message and its outbox row in one transaction (Sending), then a
    /// poke so a running engine sends it at once. To a blocked contact or one whose keys
    /// were refused it is stored as Failed to send: nothing leaves.
    /// Text or a reply: a file goes through `sendFile` (from its path), and this version sends no timer change.
    public func send(to name: String, content: MessageContent) throws(EngineError) -> MessageID {
        if let group = try groupIfNoContact(named: name) { return try send(toGroup: group, content: content) }
        return try send(to: contact(named: name), content: content)
    }

    /// What a person may write: text or a reply, not empty or only spaces, within the bound.
    static func checkWritten(_ content: MessageContent) throws(EngineError) {
        let text: String
        switch content {
        case .text(let t): text = t
        case .reply(let reply): text = reply.text
        case .attachment: throw .usage("a file is sent from its path: rchat send NAME --file PATH")
        case .control: throw .usage("this version of rChat does not send timer changes")
        case .newer, .unsent: throw .usage("this version of rChat sends only what it knows")
        }
        let bytes = text.utf8.count
        guard bytes > 0, !text.allSatisfy(\.isWhitespace) else { throw .usage("an empty message is not sent") }
        guard bytes <= Self.maximumTextBytes else {
            throw .usage("the message is too long (\(bytes) bytes; at most \(Self.maximumTextBytes))")
        }
    }

    /// A reply quotes a message of the conversation it goes to, written by a person (text, a
    /// reply, a file; not a timer change or a group's changes), still there: anything else is
    /// refused in one line, nothing stored. The one rule for a contact's conversation and a group's.
    static func checkQuote(_ content: MessageContent, in conversation: ConversationID, named name: String,
                           _ tx: StoreTransaction) throws {
        guard let target = content.quoted else { return }
        guard let quoted = try tx.message(conversation: conversation, id: target), Self.mayBeQuoted(quoted.content) else {
            throw EngineError.usage("no message \(target.hex) in \(name) to reply to (see rchat list \(name))")
        }
    }

    /// What a quote may name: what a person wrote, in this version or a later one.
    static func mayBeQuoted(_ content: MessageContent) -> Bool {
        switch content {
        case .text, .reply, .attachment, .newer: true
        case .control, .unsent: false
        }
    }

    public func send(to contact: Contact, content: MessageContent) throws(EngineError) -> MessageID {
        try Self.checkWritten(content)
        guard contact.state != .request else {
            throw .usage("\(contact.name) is a message request: add their code to accept it before replying")
        }
        let id = MessageID.fresh(clock)
        let t = clock.now()
        try Self.wrap {
            try store.transaction { tx in
                try Self.checkQuote(content, in: contact.id.conversation, named: contact.name, tx)
                let row = try tx.insertOutgoing(contact: contact.id, id: id, content: content, at: t,
                                                keysFingerprint: Self.keysFingerprint(contact))
                try tx.setExpiry(message: row, after: tx.conversationTimer(contact: contact.id).timer)
                try Self.failIfRefused(row, to: contact, at: t, tx)
            }
        }
        WakeSignal.poke(home: locations.home)
        return id
    }

    /// What the user wrote to a contact nothing can reach as they stand (blocked, keys that
    /// don't match: `SendPolicy.decideWriting`) is Failed to send at once, in the transaction
    /// that stored it: nothing leaves.
    static func failIfRefused(_ row: MessageRowID, to contact: Contact, at t: Int64, _ tx: StoreTransaction) throws {
        guard SendPolicy.decideWriting(to: contact.standing) == .refuse else { return }
        try tx.raiseStatus(message: row, event: .gaveUp, at: t)
        _ = try tx.removeFromOutbox(message: row)
    }

    /// The contact's pinned keys as they are now, stored with each message sent: "their keys
    /// have not changed since" is a comparison with this.
    static func keysFingerprint(_ contact: Contact) -> [UInt8] {
        Hash.blake2b(Array("rchat pinned keys v1".utf8) + contact.accountKey + contact.deviceKey, outputBytes: 16)
    }

    /// Each of `members`' keys as pinned now (`keysFingerprint`), for a message written to them.
    static func keysFingerprints(_ members: [ContactID], _ tx: StoreTransaction) throws -> [ContactID: [UInt8]] {
        var fingerprints: [ContactID: [UInt8]] = [:]
        for member in members { if let c = try tx.contact(id: member) { fingerprints[member] = keysFingerprint(c) } }
        return fingerprints
    }

    /// `rchat read`: marks what arrived as shown; the Read receipts are owed from the same
    /// transaction and go at the next sync (or at once, to a running engine).
    @discardableResult
    public func markRead(_ name: String) throws(EngineError) -> Int {
        if let group = try groupIfNoContact(named: name) { return try markRead(group) }
        let contact = try contact(named: name)
        let t = clock.now()
        let ids = try Self.wrap {
            try store.transaction { tx -> [MessageID] in
                let ids = try tx.markRead(contact: contact.id, at: t)
                if contact.state == .ok { try tx.oweReadReceipts(contact: contact.id, ids: ids) }
                try tx.startExpiry(contact: contact.id, ids: ids, at: t)
                return ids
            }
        }
        if !ids.isEmpty { WakeSignal.poke(home: locations.home) }
        return ids.count
    }

    /// A group shown: Read receipts owed to each message's author (a member's Read raises
    /// that member's delivery at the author's side only).
    public func markRead(_ group: StoredGroup) throws(EngineError) -> Int {
        let t = clock.now()
        let ids = try Self.wrap {
            try store.transaction { tx -> [MessageID] in
                let ids = try tx.markRead(conversation: group.conversation, at: t)
                try tx.oweReadReceipts(conversation: group.conversation, ids: ids)
                try tx.startExpiry(conversation: group.conversation, ids: ids, at: t)
                return ids
            }
        }
        if !ids.isEmpty { WakeSignal.poke(home: locations.home) }
        return ids.count
    }

    /// `rchat resend`: the user's Resend. The message goes again with its id, so it is shown
    /// once even if the first copy arrived. Without ids: every message whose status offers
    /// Resend, every message a row offers Resend for, and every message held back for a
    /// device not verified (`SendPolicy`: resent by hand, it goes there). A Delivered or Read message is
    /// never sent again: a receipt proved it arrived.
    public func resend(_ name: String, ids: [MessageID]?) throws(EngineError) -> ResendOutcome {
        try resend(target(named: name), ids: ids)
    }

    /// Resend as the view asks it (a selected message, or a row's messages): those that
    /// arrived meanwhile are left out, and when nothing is left the refusal is in words,
    /// never a message id.
    public func resendShown(_ contact: Contact, ids: [MessageID]) throws(EngineError) -> ResendOutcome {
        try resendShown(.contact(contact), ids: ids)
    }

    public func resendShown(_ target: ConversationTarget, ids: [MessageID]) throws(EngineError) -> ResendOutcome {
        let pending = try Self.wrap {
            try store.transaction { tx in
                try ids.filter { id in try tx.message(conversation: target.conversation, id: id)?.status?.isFinal == false }
            }
        }
        guard !pending.isEmpty else {
            throw .usage(ids.count == 1 ? "Nothing to resend: the message arrived." : "Nothing to resend: the messages arrived.")
        }
        return try resend(target, ids: pending).refusingNothingSent(to: target.name)
    }

    /// What a Resend did: the messages queued again, and those left because they were
    /// written for keys the contact no longer has (`ResendPolicy.ByUser.keysChanged`).
    public struct ResendOutcome: Sendable, Equatable {
        public var resent: [MessageID]
        public var keptForChangedKeys: [MessageID]

        /// The outcome, or the one-line refusal when nothing went because everything asked
        /// for was written before `name`'s keys changed (what the user sees: `r`, `rchat resend`).
        public func refusingNothingSent(to name: String) throws(EngineError) -> ResendOutcome {
            guard resent.isEmpty, !keptForChangedKeys.isEmpty else { return self }
            throw .usage(AccountService.keysChangedRefusal(name, count: keptForChangedKeys.count))
        }
    }

    /// The line that refuses a Resend of messages written before `name`'s keys changed.
    public static func keysChangedRefusal(_ name: String, count: Int) -> String {
        "\(count == 1 ? "a message" : "\(count) messages") sent before \(name)'s keys changed \(count == 1 ? "is" : "are") not sent again: write \(count == 1 ? "it" : "them") again if you trust their new keys"
    }

    public func resend(_ contact: Contact, ids: [MessageID]?) throws(EngineError) -> ResendOutcome {
        try resend(.contact(contact), ids: ids)
    }

    /// The user's Resend in a contact's conversation or a group's, decided per delivery
    /// (`ResendPolicy.byUser` on that member's status, keys and rows): in a group, only the
    /// deliveries to current members that need it go again, each to its member alone.
    public func resend(_ target: ConversationTarget, ids: [MessageID]?) throws(EngineError) -> ResendOutcome {
        if case .contact(let contact) = target { try Self.requireResendable(contact) }
        if case .group(let group) = target { try requireWritable(group) }
        let t = clock.now()
        let conversation = target.conversation
        let outcome = try Self.wrap {
            try store.transaction { tx -> ResendOutcome in
                let outgoing = try tx.outgoingMessages(conversation: conversation, since: 0)
                let offeredByRows = try Set(tx.idsOfferedForResend(conversation: conversation))
                // Each member's keys now, and what rChat holds back for a device of theirs not verified.
                var members: [ContactID: (contact: Contact, fingerprint: [UInt8], held: [MessageRowID: SendPolicy.Hold])?] = [:]
                func member(_ id: ContactID) throws -> (contact: Contact, fingerprint: [UInt8], held: [MessageRowID: SendPolicy.Hold])? {
                    if let known = members[id] { return known }
                    var found: (Contact, [UInt8], [MessageRowID: SendPolicy.Hold])?
                    if let c = try tx.contact(id: id), SendPolicy.decideWriting(to: c.standing) != .refuse {
                        found = (c, Self.keysFingerprint(c), try Self.held(c, tx))
                    }
                    members[id] = found
                    return found
                }
                // A message's deliveries that count: a direct conversation's one, a group's to current members.
                func deliveries(_ m: StoredMessage) throws -> [StoredDelivery] {
                    try tx.deliveries(message: m.rowID).filter { conversation == $0.member.conversation || $0.isCurrent }
                }
                func decision(_ m: StoredMessage, _ d: StoredDelivery) throws -> ResendPolicy.ByUser? {
                    guard let who = try member(d.member) else { return nil }
                    return ResendPolicy.byUser(status: d.status, keysUnchangedSinceSent: d.keysFingerprint == who.fingerprint,
                                               offeredByRow: offeredByRows.contains(m.id))
                }
                var chosen: [(StoredMessage, [ContactID])] = []
                var kept: [MessageID] = []
                if let ids {
                    for id in ids {
                        guard let m = outgoing.first(where: { $0.id == id }) else {
                            throw EngineError.usage("\(target.name) has no message of yours with id \(id.hex)")
                        }
                        var going: [ContactID] = [], keysChanged = false
                        for d in try deliveries(m) {
                            switch try decision(m, d) {
                            case .resend?, .notOffered?: going.append(d.member)
                            case .keysChanged?: keysChanged = true
                            case .arrived?, nil: continue
                            }
                        }
                        if !going.isEmpty { chosen.append((m, going)) } else if keysChanged { kept.append(m.id) } else {
                            throw EngineError.usage("message \(id.hex) is \(m.status?.rawValue ?? "incoming"): it arrived, there is nothing to resend")
                        }
                    }
                } else {
                    for m in outgoing {
                        var going: [ContactID] = [], keysChanged = false
                        for d in try deliveries(m) {
                            switch try decision(m, d) {
                            case .resend?: going.append(d.member)
                            case .keysChanged? where d.status.offersResend: keysChanged = true
                            case .notOffered? where try member(d.member)?.held[m.rowID] != nil: going.append(d.member)
                            case .keysChanged?, .arrived?, .notOffered?, nil: continue
                            }
                        }
                        if !going.isEmpty { chosen.append((m, going)) } else if keysChanged { kept.append(m.id) }
                    }
                }
                let resent = try chosen.compactMap { m, going -> MessageID? in
                    var queued = false
                    for who in going {
                        if try tx.queueResend(conversation: conversation, member: who, id: m.id, automatically: false, at: t)?.current == .sending {
                            queued = true
                        }
                    }
                    return queued ? m.id : nil
                }
                return ResendOutcome(resent: resent, keptForChangedKeys: kept)
            }
        }
        if !outcome.resent.isEmpty { WakeSignal.poke(home: locations.home) }
        return outcome
    }

    /// Whether anything can be sent to `contact` again now; the one-line refusal if not.
    private static func requireResendable(_ contact: Contact) throws(EngineError) {
        switch SendPolicy.decideWriting(to: contact.standing) {
        case .send, .hold(.newDevice):
            return
        case .hold(.notAccepted):
            throw .usage("\(contact.name) is a message request: add their code to accept it first")
        case .refuse:
            throw .usage(contact.isBlocked
                ? "\(contact.name) is blocked: nothing is sent to them (rchat unblock \(contact.name) first)"
                : "nothing can be sent to \(contact.name) until their code is entered again")
        }
    }

    /// `rchat block|unblock|mute|unmute|delete`.
    public enum ContactChange: Sendable { case block, unblock, mute, unmute, delete }

    public func change(_ name: String, _ change: ContactChange) throws(EngineError) {
        switch try target(named: name) {
        case .contact(let contact): try self.change(contact, change)
        case .group(let group): try self.change(group, change)
        }
    }

    /// `rchat block|unblock|mute|unmute GROUP`. Blocked, what is queued for it is Failed to
    /// send at once (nothing more leaves for it); a group is not deleted, it is left.
    public func change(_ group: StoredGroup, _ change: ContactChange) throws(EngineError) {
        let t = clock.now()
        try Self.wrap {
            try store.transaction { tx in
                switch change {
                case .mute, .unmute: try tx.setMuted(group: group.conversation, change == .mute)
                case .unblock: try tx.setBlocked(group: group.conversation, false)
                case .delete: throw EngineError.usage("a group is not deleted: leave it (rchat group leave \(group.name))")
                case .block:
                    try tx.setBlocked(group: group.conversation, true)
                    _ = try tx.giveUp(tx.outbox(conversation: group.conversation).map(\.delivery), at: t)
                }
            }
        }
        WakeSignal.poke(home: locations.home)
    }

    public func change(_ contact: Contact, _ change: ContactChange) throws(EngineError) {
        try Self.wrap {
            switch change {
            case .block: try store.setBlocked(contact: contact.id, true)
            case .unblock: try store.setBlocked(contact: contact.id, false)
            case .mute: try store.setMuted(contact: contact.id, true)
            case .unmute: try store.setMuted(contact: contact.id, false)
            case .delete: try store.setDeleted(contact: contact.id, true)
            }
        }
        WakeSignal.poke(home: locations.home)
    }

    /// The conversation as `rchat list` and the TUI show it: all of it, or a page.
    public func conversation(_ name: String, limit: Int? = nil, skippingLatest: Int = 0) throws(EngineError) -> [ConversationItem] {
        if let group = try groupIfNoContact(named: name) {
            return try conversation(group, limit: limit, skippingLatest: skippingLatest)
        }
        return try conversation(contact(named: name), limit: limit, skippingLatest: skippingLatest)
    }

    /// A group's conversation: each incoming message with its author, each outgoing one with
    /// its delivery to each member it was written to.
    public func conversation(_ group: StoredGroup, limit: Int? = nil, skippingLatest: Int = 0) throws(EngineError) -> [ConversationItem] {
        try Self.wrap {
            let count = try limit ?? store.conversationCount(group.conversation)
            let stored = try store.conversation(group.conversation, limit: count, skippingLatest: skippingLatest)
            let files = try Self.files(among: stored, store)
            var names: [ContactID: String] = [:]
            func name(_ id: ContactID) throws -> String {
                if let known = names[id] { return known }
                let found = try store.contact(id: id)?.name ?? "someone"
                names[id] = found
                return found
            }
            // A change is told as its author made it, whoever handed it on (a sync, a log
            // handed to a member who started over): "Alice renamed…", not the one who passed it.
            var mine: Set<[UInt8]>?
            func changeAuthor(_ content: MessageContent) throws -> String? {
                guard case .control(.groupChanges(let changes)) = content,
                      let last = changes.last.flatMap({ try? MembershipChange(decoding: $0) }) else { return nil }
                if mine == nil {
                    let me = try identity()
                    mine = Set([me.accountKey.publicKey] + (me.previous.map { [$0.key.publicKey] } ?? []))
                }
                if mine!.contains(last.author) { return "You" }
                return try store.contact(anyAccountKey: last.author)?.name
            }
            // A change handed on again (by two members answering one sync, or a log handed to
            // someone who held it) is stored for its Delivered, and shown once: where it was first.
            var told: Set<[UInt8]> = []   // each last change's bytes
            let quotes = try Self.quotes(among: stored, in: group.conversation, store) { m in try m.author.map(name) ?? "someone" }
            let actions = try Self.actions(among: stored, in: group.conversation, store)
            let reactions = try Self.reactions(among: actions, name: name)
            let edits = Self.edits(among: stored, actions)
            return try stored.compactMap { stored -> ConversationItem? in
                guard case .message(let m) = stored else { return item(stored, files, peer: group.name) }
                if case .control(.groupChanges(let changes)) = m.content, let last = changes.last,
                   !told.insert(last).inserted { return nil }
                let author = try m.author.map(name)
                let teller = m.isOutgoing ? nil : try changeAuthor(m.content)
                var shown = item(stored, files, peer: teller ?? author ?? group.name)
                guard case .message(var message) = shown else { return shown }
                message.author = author
                message.quote = m.content.quoted.flatMap { quotes[$0] }
                message.reactions = reactions[m.id] ?? []
                (message.versions, message.pendingAction) = edits[m.id] ?? ([], nil)
                if m.isOutgoing {
                    message.deliveries = try store.deliveries(message: m.rowID).map {
                        .init(member: try name($0.key.member), status: $0.status, isCurrent: $0.isCurrent)
                    }
                }
                shown = .message(message)
                return shown
            }
        }
    }

    public func conversation(_ contact: Contact, limit: Int? = nil, skippingLatest: Int = 0) throws(EngineError) -> [ConversationItem] {
        try Self.wrap {
            let count = try limit ?? store.conversationCount(contact: contact.id)
            let stored = try store.conversation(contact: contact.id, limit: count, skippingLatest: skippingLatest)
            let files = try Self.files(among: stored, store)
            let held = try Self.held(contact, store)
            let quotes = try Self.quotes(among: stored, in: contact.id.conversation, store) { _ in contact.name }
            let actions = try Self.actions(among: stored, in: contact.id.conversation, store)
            let reactions = try Self.reactions(among: actions) { _ in contact.name }
            let edits = Self.edits(among: stored, actions)
            return stored.map { stored in
                var shown = item(stored, files, peer: contact.name)
                if case .message(var m) = shown {
                    m.quote = m.content.quoted.flatMap { quotes[$0] }
                    m.reactions = reactions[m.id] ?? []
                    (m.versions, m.pendingAction) = edits[m.id] ?? ([], nil)
                    shown = .message(m)
                }
                if case .message(var m) = shown, case .message(let s) = stored, let hold = held[s.rowID] {
                    m.waiting = hold
                    shown = .message(m)
                }
                return shown
            }
        }
    }

    /// The quotes of the replies among a page of a conversation: each target as this side
    /// holds it in that conversation, by id (`author`: who wrote an incoming one).
    static func quotes(among stored: [StoredConversationItem], in conversation: ConversationID, _ store: some StoreAccess,
                       author: (StoredMessage) throws -> String) throws -> [MessageID: MessageItem.Quote] {
        let targets = stored.compactMap { item -> MessageID? in
            if case .message(let m) = item { return m.content.quoted } else { return nil }
        }
        guard !targets.isEmpty else { return [:] }
        let expired = try store.expiredIDs(conversation: conversation, among: targets)
        var quotes: [MessageID: MessageItem.Quote] = [:]
        for target in targets where quotes[target] == nil {
            let m = try store.message(conversation: conversation, id: target)
            if let m, mayBeQuoted(m.content) {
                let name = m.isOutgoing ? "You" : try author(m)
                quotes[target] = .message(author: name, text: m.currentContent.displayText(direction: m.direction))
            } else {
                // Gone when its time ran out, or deleted for everyone: the quote says so.
                quotes[target] = expired.contains(target) || m?.content == .unsent ? .deleted : .notFound
            }
        }
        return quotes
    }

    /// The files among a page of a conversation, as each message shows it.
    static func files(among stored: [StoredConversationItem], _ store: some StoreAccess) throws -> [MessageRowID: StoredAttachment] {
        try store.attachments(messages: stored.compactMap {
            if case .message(let m) = $0, m.content.isAttachment { return m.rowID } else { return nil }
        })
    }

    /// The contact's queued messages that rChat holds back, and why (`SendPolicy`, as the
    /// engine applies it): while a device of theirs that is not pinned was announced since
    /// their code was last entered, what was not asked for by hand below that row.
    static func held(_ contact: Contact, _ store: some StoreAccess) throws -> [MessageRowID: SendPolicy.Hold] {
        guard let row = try store.newDeviceRowPosition(contact: contact.id, since: contact.keysChangedAt) else { return [:] }
        var held: [MessageRowID: SendPolicy.Hold] = [:]
        for item in try store.outbox(contact: contact.id) {
            if case .hold(let hold) = SendPolicy.decide(.message(item.origin), to: contact.standing, device: .unpinned(announcedAt: row)) {
                held[item.message] = hold
            }
        }
        return held
    }

    func item(_ stored: StoredConversationItem, _ files: [MessageRowID: StoredAttachment], peer: String) -> ConversationItem {
        switch stored {
        case .message(let m):
            var transfer: AttachmentTransfer?
            if case .attachment(let attachment) = m.content, let file = files[m.rowID] {
                transfer = Self.transfer(file, size: attachment.size, home: attachmentFiles)
            }
            var item = MessageItem(id: m.id, direction: m.direction, content: m.currentContent, status: m.status,
                                   resent: m.isResent, at: m.createdAt, transfer: transfer)
            item.expiresAt = m.expiresAt
            item.peerName = peer
            return .message(item)
        case .row(let r):
            return .row(SystemRow(id: r.id, text: r.text, action: r.action, messageIDs: r.messageIDs, at: r.createdAt))
        }
    }

    /// Where an attachment's file stands, as the view and `list --json` show it.
    static func transfer(_ file: StoredAttachment, size: UInt64, home: AttachmentFiles) -> AttachmentTransfer {
        switch file.state {
        case .complete(let path): return .complete(path: home.absolute(path))
        case .discarded(let reason): return .discarded(reason: reason)
        case .moving:
            if file.direction == .outgoing, file.isTakenWhole, let copy = file.sentCopy {
                return .complete(path: home.absolute(copy))
            }
            let last = file.chunks.count - 1
            var done = UInt64(file.chunks.doneCount) * UInt64(FileStream.plainChunkBytes)
            if file.chunks.contains(last) { done -= UInt64(FileStream.plainChunkBytes - FileStream.plainBytes(ofChunk: last, size: size)) }
            return .moving(done: min(done, size), waiting: file.direction == .outgoing ? file.waiting : nil)
        }
    }

    /// `rchat settings KEY VALUE`.
    public func setSetting(_ key: String, _ value: String) throws(EngineError) {
        guard let setting = Setting(rawValue: key) else {
            throw .usage("unknown setting \(key) (see rchat settings --help)")
        }
        try setSetting(setting, value)
    }

    public func setSetting(_ setting: Setting, _ value: String) throws(EngineError) {
        let stored = try setting.stored(from: value)
        try Self.wrap { try store.setSetting(setting.storeKey, stored) }
        WakeSignal.poke(home: locations.home)
    }

    /// Every setting with what it shows now, in `Setting`'s order.
    public func settingsList() throws(EngineError) -> [(Setting, String)] {
        let stored = try Self.wrap { try store.settings() }
        return Setting.allCases.map { ($0, $0.shown(stored[$0.storeKey])) }
    }
}
