import RChatCore
import RChatCrypto
import RChatStore

/// The bounds of a group's messages kept before this side holds the group (schema step 18):
/// per author, and how long (the relay's own hold).
enum GroupWaiting {
    static let perAuthor = 1_000
    static let window: Int64 = 72 * 3600
}

/// Groups as the engine receives them (DESIGN.md §16; docs/PROTOCOL.md "Group membership
/// log", "Groups on the wire"): a group's message from a member over its pairwise session,
/// carrying changes to the group's log or something to show. What a change does is
/// `GroupLog`'s to say; this is where a log is read from the store, what it takes is stored
/// with it, and the roster it folds to becomes the conversation's members — people the
/// adder knew and this side does not become `Contact.Kind.member` rows, each with a channel.
package enum Groups {
    /// The log the store holds for `group`, every change in it as it was taken.
    package static func log(_ group: StoredGroup, _ tx: StoreTransaction) throws -> GroupLog? {
        let stored = try tx.groupChanges(group.conversation).compactMap { held -> (VerifiedChange, taken: Bool)? in
            // Verified when it was stored; its id is its hash again.
            guard let change = try? MembershipChange(decoding: held.bytes) else { return nil }
            return (VerifiedChange(id: change.id, change: change), held.taken)
        }
        guard let create = stored.first(where: { $0.0.change.group == nil && $0.0.id.bytes == group.groupID })?.0 else { return nil }
        return try? GroupLog(restoring: create, taken: stored.filter(\.taken).map(\.0), waiting: stored.filter { !$0.taken }.map(\.0))
    }

    /// What a group's message did.
    enum Received: Equatable {
        /// Something to store in the group's conversation, from its author.
        case message(ConversationID)
        /// Dropped (logged): from someone not in the group, or changes none of which could be taken.
        case dropped(String)
        /// For a group not held here that they do not make this side's (no create among
        /// them, or a roster without this side or its sender): kept to be taken once a log
        /// brings the group (`GroupWaiting`), as an older log may come after a newer one.
        case notHeld(String)
        /// From someone not in the roster held here, with changes that wait for parents this
        /// log lacks (an add of theirs not seen yet, say): kept as `notHeld` is, and judged
        /// again once the log takes more.
        case waitsForChanges(String)
    }

    /// Changes to a group's log from `sender` (a contact or a member): taken as `GroupLog`
    /// says, the group made if this side is in the roster they fold to and holds no log of
    /// it yet. Returns the conversation to store the message in (the changes shown as what
    /// they did), or why it was dropped.
    static func receiveChanges(_ changes: [[UInt8]], group groupID: GroupID, from sender: Contact, as identity: AccountIdentity,
                               _ tx: StoreTransaction, at now: Int64, clock: any Clock,
                               log note: (String) -> Void, queued: (ContactID) -> Void = { _ in }) throws -> (Received, contactsAdded: Bool) {
        let me = identity.accountKey.publicKey
        var verified: [VerifiedChange] = []
        for bytes in changes {
            do { verified.append(try MembershipChange.verified(decoding: bytes)) } catch {
                note("a group change from \(sender.name) refused: \(error)")
            }
        }
        let held = try tx.group(id: groupID.bytes)
        var log: GroupLog
        if let held {
            guard let stored = try Self.log(held, tx) else { return (.dropped("the group's log does not read"), false) }
            log = stored
        } else {
            // A group not held: its create must be among them.
            guard let create = verified.first(where: { $0.change.group == nil && GroupID($0.id) == groupID }),
                  let fresh = try? GroupLog(create: create) else {
                return (.notHeld("changes for a group this account does not hold"), false)
            }
            log = fresh
        }
        var taken: [ChangeID] = [], waiting: [ChangeID] = [], replays = 0
        for change in verified where change.change.group != nil || held == nil {
            switch log.receive(change) {
            case .taken(let ids): taken += ids
            case .waiting: waiting.append(change.id)
            case .replay: replays += 1
            case .refused(let why): note("a change to the group \(log.roster.name) from \(sender.name) refused: \(why)")
            }
        }
        // A roster that names this side by the key it rotated from: its rekey, made now.
        let rekey = rekey(&log, as: identity)
        if held == nil {
            // Made only by a roster this side and the sender are in.
            guard log.roster.isMember(me), isMember(sender, of: log.roster) else {
                return (.notHeld("a group this account is not in, or that its sender is not in"), false)
            }
            let conversation = try tx.insertGroup(groupID: groupID.bytes, name: log.roster.name, at: now)
            for id in log.order where id != rekey?.id {
                try tx.storeGroupChange(conversation, id: id.bytes, bytes: log.changes[id]!.encoded, taken: true, at: now)
            }
            for id in waiting { try tx.storeGroupChange(conversation, id: id.bytes, bytes: log.waiting[id]!.encoded, taken: false, at: now) }
            var added = try setRoster(conversation, from: log, me: me, tx, at: now)
            if let rekey {
                added = try publish(rekey, of: log, in: conversation, me: me, id: .fresh(clock), tx, at: now, clock: clock, queued: queued) || added
            }
            return (.message(conversation), added)
        }
        let conversation = held!.conversation
        // From a current member, or one the changes bring in — or someone once in the group
        // here with changes this log takes (signed by their authors: one who has left since
        // may hand on what they took; a replay from them is not shown).
        let senderRow = try tx.members(conversation).first { $0.contact == sender.id }
        guard senderRow?.state == .current || isMember(sender, of: log.roster) || senderRow != nil && !taken.isEmpty
        else {
            return waiting.isEmpty ? (.dropped("changes from someone who is not in the group"), false)
                                   : (.waitsForChanges("changes from someone not in the group as held here, after changes it lacks"), false)
        }
        for id in taken { try tx.storeGroupChange(conversation, id: id.bytes, bytes: log.changes[id]!.encoded, taken: true, at: now) }
        for id in waiting { try tx.storeGroupChange(conversation, id: id.bytes, bytes: log.waiting[id]!.encoded, taken: false, at: now) }
        // Nothing of it could be taken (forged, refused): dropped. Changes held already (a
        // log sent again) are stored as any message is, so its Delivered is true.
        guard !taken.isEmpty || !waiting.isEmpty || replays > 0 else { return (.dropped("none of its changes could be taken"), false) }
        guard !taken.isEmpty else { return (.message(conversation), false) }
        let before = Set(try tx.members(conversation).filter { $0.state == .current }.map(\.contact))
        var added = try setRoster(conversation, from: log, me: me, tx, at: now)
        if let rekey {
            added = try publish(rekey, of: log, in: conversation, me: me, id: .fresh(clock), tx, at: now, clock: clock, queued: queued) || added
        }
        // Someone this took out of the group (they left, or another admin removed them) is
        // handed the log that says so by each admin, to them alone: one who reinstalled since
        // they left — and was handed the group before this side learnt of it — knows the
        // group no longer has them, and is not left believing in an old roster.
        var handTo: Set<ContactID> = []
        if log.roster.member(me)?.role == .admin {
            let after = Set(try tx.members(conversation).filter { $0.state == .current }.map(\.contact))
            for gone in before.subtracting(after).sorted() {
                guard let contact = try tx.contact(id: gone) else { continue }
                note("\(contact.name) is no longer in \(log.roster.name): they are handed the log that says so")
                handTo.insert(gone)
            }
        }
        // A change whose author had not seen someone join (an add made at the same time) never
        // went to them: the one who added them hands it on (an admin, when their adder is gone).
        for id in taken where log.changes[id]?.author != me {
            for key in log.membersUnseen(by: id) where key != me {
                guard let member = log.roster.member(key) else { continue }
                let adder = log.roster.member(member.addedBy)
                guard adder?.accountKey == me || adder == nil && log.roster.isAdmin(me),
                      let contact = try contact(for: member, tx) else { continue }
                if handTo.insert(contact.id).inserted {
                    note("\(contact.name) joined \(log.roster.name) unseen by a change: they are handed the log")
                }
            }
        }
        for id in handTo.sorted() {
            guard let contact = try tx.contact(id: id) else { continue }
            try sendLog(log, in: conversation, to: contact, tx, at: now, clock: clock)
            queued(id)   // their channel sends it after the commit
        }
        return (.message(conversation), added)
    }

    /// The log so far (the newest change last), as group changes messages to `member` alone.
    static func sendLog(_ log: GroupLog, in conversation: ConversationID, to member: Contact, _ tx: StoreTransaction,
                        at now: Int64, clock: any Clock) throws {
        try sendChanges(log.order, of: log, in: conversation, to: member, tx, at: now, clock: clock)
    }

    /// Changes of `log` (in the order given: parent first), as group changes messages to
    /// `member` alone.
    static func sendChanges(_ ids: [ChangeID], of log: GroupLog, in conversation: ConversationID, to member: Contact,
                            _ tx: StoreTransaction, at now: Int64, clock: any Clock) throws {
        for part in AccountService.parts(ids.compactMap { log.changes[$0]?.encoded }) {
            try tx.insertOutgoing(conversation: conversation, id: .fresh(clock), content: .control(.groupChanges(part)), at: now,
                                  keysFingerprints: [member.id: AccountService.keysFingerprint(member)], to: [member.id])
        }
    }

    /// The conversation's members as `log` folds them: each other member by contact (one the
    /// adder knew and this side does not becomes a member row, from the code the log hands
    /// on), whoever is no longer in it left or was removed. Whether a member row was made.
    @discardableResult
    static func setRoster(_ conversation: ConversationID, from log: GroupLog, me: [UInt8], _ tx: StoreTransaction, at now: Int64) throws -> Bool {
        var members: [ContactID: ConversationMember.Role] = [:], added = false
        for member in log.roster.members where !member.has(me) {
            let contact: ContactID
            if let known = try Self.contact(for: member, tx) {
                contact = known.id
            } else {
                let code = member.code
                contact = try tx.addContact(NewContact(name: code.name, accountKey: code.accountKey, deviceKey: code.deviceKey,
                                                       deviceCertificate: code.deviceCertificate, relayAddress: code.relay.description,
                                                       inviteToken: code.inviteToken, state: .ok, code: code.text, kind: .member), at: now).id
                added = true
            }
            members[contact] = member.role == .admin ? .admin : .member
        }
        // Who left: an effective leave of theirs; anyone else gone was removed.
        let leavers = Set(log.order.filter { log.ineffective[$0] == nil }.compactMap { id -> HashedBytes? in
            guard let change = log.changes[id], case .leave = change.action else { return nil }
            return HashedBytes(change.author)
        })
        var gone: [ContactID: ConversationMember.State] = [:]
        for member in try tx.members(conversation) where members[member.contact] == nil && member.state == .current {
            guard let contact = try tx.contact(id: member.contact) else { continue }
            gone[member.contact] = ([contact.accountKey] + (contact.previousAccountKey.map { [$0] } ?? [])).contains { leavers.contains(HashedBytes($0)) }
                ? .left : .removed
        }
        let selfState: ConversationMember.State = log.roster.isMember(me) ? .current : leavers.contains(HashedBytes(me)) ? .left : .removed
        try tx.setRoster(conversation, name: log.roster.name, selfState: selfState, heads: log.sortedHeads.flatMap(\.bytes),
                         members: members, gone: gone)
        try tx.setGroupTimer(conversation, DisappearingTimer(rawValue: log.roster.timerSeconds) ?? .off)
        return added
    }

    /// A member who started over lost every group it was in. Each group this side holds with
    /// them hands them its log again (the newest change last), to them alone, where this side
    /// is an admin — or they are (then every member does, so an admin who reinstalled is
    /// never left without the group when the other admins are away): with it they hold the
    /// group again, and what waited for it there (`GroupWaiting`) and what is resent to them
    /// is shown. Returns how many groups.
    @discardableResult
    static func handOn(to member: Contact, me: [UInt8], _ tx: StoreTransaction, at now: Int64, clock: any Clock) throws -> Int {
        var handed = 0
        for group in try tx.groups() where group.state == .current && !group.isBlocked {
            guard try tx.members(group.conversation).contains(where: { $0.contact == member.id && $0.state == .current }),
                  let log = try log(group, tx),
                  log.roster.member(me)?.role == .admin || role(of: member, in: log.roster) == .admin else { continue }
            try sendLog(log, in: group.conversation, to: member, tx, at: now, clock: clock)
            handed += 1
        }
        return handed
    }

    // MARK: members who rotated their keys

    /// The contact row a roster's member is: by the key they sign with now, else by a key
    /// they had before a rekey — pinned here still (their rotation not taken yet), or the
    /// one a taken rotation left (`contact(anyAccountKey:)`: their rekey not in this log yet).
    static func contact(for member: GroupRoster.Member, _ tx: StoreTransaction) throws -> Contact? {
        for key in [member.accountKey] + member.formerKeys.reversed() {
            if let found = try tx.contact(anyAccountKey: key) { return found }
        }
        return nil
    }

    /// The member of `roster` that `contact` is, by the key pinned for them or the one they rotated from.
    static func member(_ contact: Contact, in roster: GroupRoster) -> GroupRoster.Member? {
        roster.member(contact.accountKey) ?? contact.previousAccountKey.flatMap { roster.member($0) }
    }

    static func isMember(_ contact: Contact, of roster: GroupRoster) -> Bool { member(contact, in: roster) != nil }

    static func role(of contact: Contact, in roster: GroupRoster) -> GroupRole? { member(contact, in: roster)?.role }

    /// The rekey this account owes `log`, taken into it: its roster names this account by
    /// the key it rotated from (a log from before `keys rotate`, or one an admin added it to
    /// again with its old code), so it signs with that key the change naming its key now, for
    /// the device the roster has (`GroupRoster.applying`). Nil when the roster names it by its
    /// key now, or not at all.
    static func rekey(_ log: inout GroupLog, as identity: AccountIdentity) -> VerifiedChange? {
        guard let previous = identity.previous?.key, let mine = log.roster.author(previous.publicKey),
              !log.roster.isMember(identity.accountKey.publicKey) else { return nil }
        let code = ContactCode.signed(name: identity.name, account: identity.accountKey, device: mine.code.deviceKey,
                                      relay: identity.relay, inviteToken: identity.inviteToken.bytes)
        let change = MembershipChange.next(.rekey(code), in: log, by: previous)
        guard case .taken = log.receive(change), log.ineffective[change.id] == nil else { return nil }
        return change
    }

    /// Every group whose roster names this account by the key it rotated from gets its rekey
    /// (after `keys rotate`; at each start, for a rotation cut short before this ran), sent
    /// to its members. Returns how many groups.
    @discardableResult
    static func rekeyAll(as identity: AccountIdentity, _ tx: StoreTransaction, at now: Int64, clock: any Clock) throws -> Int {
        guard identity.previous != nil else { return 0 }
        var rekeyed = 0
        for group in try tx.groups() where group.state == .current {
            guard var log = try log(group, tx), let change = rekey(&log, as: identity) else { continue }
            try publish(change, of: log, in: group.conversation, me: identity.accountKey.publicKey, id: .fresh(clock), tx, at: now, clock: clock)
            rekeyed += 1
        }
        return rekeyed
    }

    /// A change this account made, taken into `log` already: stored, the roster set, and the
    /// log so far sent to every member the roster has now (and `alsoTo`), the newest change
    /// last — a member who just joined can follow it all; the last part (the change) has
    /// `id`. Whether a member row was made.
    @discardableResult
    static func publish(_ change: VerifiedChange, of log: GroupLog, in conversation: ConversationID, me: [UInt8], id: MessageID,
                        alsoTo extra: [ContactID] = [], _ tx: StoreTransaction, at now: Int64, clock: any Clock,
                        queued: (ContactID) -> Void = { _ in }) throws -> Bool {
        try tx.storeGroupChange(conversation, id: change.id.bytes, bytes: change.change.encoded, taken: true, at: now)
        let added = try setRoster(conversation, from: log, me: me, tx, at: now)
        let recipients = Array(Set(try tx.members(conversation).filter { $0.state == .current }.map(\.contact) + extra)).sorted()
        guard !recipients.isEmpty else { return added }
        // With the keys each was written for, as any message to them.
        let fingerprints = try AccountService.keysFingerprints(recipients, tx)
        let parts = AccountService.parts(log.order.map { log.changes[$0]!.encoded })
        for (i, part) in parts.enumerated() {
            try tx.insertOutgoing(conversation: conversation, id: i == parts.count - 1 ? id : .fresh(clock),
                                  content: .control(.groupChanges(part)), at: now, keysFingerprints: fingerprints, to: recipients)
        }
        for member in recipients { queued(member) }
        return added
    }
}
