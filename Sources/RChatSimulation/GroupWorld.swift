import Foundation
import RChatCore
import RChatEngine
import RChatStore

/// Groups in the simulation (issue 30): three to five accounts, the first a contact of every
/// other and the others of each other or strangers, in one group the first made; its members write to it, read it, and its admin
/// removes and adds members again, members leave and come back, among the faults, crashes,
/// power cuts and reinstalls of every run. `GroupInvariants` checks after every step that
/// each delivery's status is as true as one-to-one, that nothing is shown twice, and that
/// what is written after a member left the sender's roster never reaches them; after the
/// heal, that every member holds the same roster and every message reached every member
/// still in it.
extension SimulatedWorld {
    static let groupName = "g"

    /// The group mode's invariants (made by `setUpGroup`).
    var groupChecks: GroupInvariants { groupInvariants! }

    /// The group mode's set-up: the accounts (3 to 5), and the first one's group of all of
    /// them. The first knows every other; each other pair knows each other or not (half the
    /// time): strangers meet through the group, as `Contact.Kind.member`s.
    func setUpGroup() throws {
        let n = 3 + Int.random(in: 0...2, using: &random)
        var strangers: Set<[Int]> = []
        for a in 1..<n {
            for b in (a + 1)..<max(a + 1, n) where random.chance(0.5) { strangers.insert([a, b]) }
        }
        try setUp(accounts: n) { a, b in !strangers.contains([min(a, b), max(a, b)]) }
        if !strangers.isEmpty {
            trace.note("strangers to each other: " + strangers.sorted { $0.lexicographicallyPrecedes($1) }
                .map { "\(accounts[$0[0]].name)–\(accounts[$0[1]].name)" }.joined(separator: ", "))
        }
        let admin = accounts[0]
        _ = try admin.commands(clock).createGroup(name: Self.groupName, members: accounts.dropFirst().map(\.name))
        groupInvariants = GroupInvariants(world: self)
        admin.engine?.wake()
        trace.note("\(admin.name) made the group \(Self.groupName) of \(accounts.count)")
    }

    func chooseGroupAction() -> Action {
        let n = accounts.count
        let who = Int.random(in: 0..<n, using: &random)
        let roll = random.uniform(0...1)
        switch roll {
        case ..<0.36: return .groupSend(from: who)
        case ..<0.44: return .groupRead(who: who)
        case ..<0.56: return .wait
        case ..<0.61:
            return randomFaults()
        case ..<0.64: return network.partitioned.isEmpty ? .partition(who) : .rejoin(who)
        case ..<0.68: return .cut(Int.random(in: 0..<8, using: &random))
        case ..<0.72: return .restart(who)
        case ..<0.76: return .kill(who)
        case ..<0.78: return .killRelay
        case ..<0.79: return .allOffline(hours: random.uniform(0.5...30))
        case ..<0.80: return .reinstall(who, newPhone: false)
        case ..<0.85: return .groupChange(who: who)
        case ..<0.86: return rotations ? .rotateKeys(who) : .groupChange(who: who)
        case ..<0.90: return .resendGroup(who: who)
        default: return .powerCut(random.chance(0.25) ? n : who)
        }
    }

    /// The account's group, if its current install holds it.
    func group(of account: SimulatedAccount) throws -> (AccountService, StoredGroup)? {
        let service = try account.commands(clock)
        guard let group = try service.store.groups(named: Self.groupName).first else { return nil }
        return (service, group)
    }

    func performGroupAction(_ action: Action) throws {
        switch action {
        case .groupSend(let from):
            let sender = accounts[from]
            guard let (service, group) = try group(of: sender), group.state == .current else { return }
            let text = "g\(groupChecks.messageCount + 1) from \(sender.name)"
            var content = MessageContent.text(text)
            if itemRandom.chance(0.3), let target = ReplyChecks.quotable(try service.conversation(group), using: &itemRandom) {
                content = .reply(Reply(target: target, text: text))
            }
            let id: MessageID
            do { id = try service.send(toGroup: group, content: content) } catch { return trace.note("\(sender.name) cannot write: \(error)") }
            if let target = content.quoted { replies.wrote(id, quoting: target) }
            try groupChecks.sent(id, from: sender, group: group, service: service)
            trace.note("\(sender.name) wrote \(id.hex) to the group" + (content.quoted.map { ", replying to \($0.hex)" } ?? ""))
            // A quarter of the time, a reaction too (or one taken back), to a message there.
            if itemRandom.chance(0.25) { try react(sender, service, group) }
            // Now and then an edit, or a delete for everyone, of one of the sender's own.
            if itemRandom.chance(0.15) { try change(sender, service, in: .group(group), items: try service.conversation(group), with: nil) }
            sender.engine?.wake()
        case .groupRead(let who):
            let reader = accounts[who]
            guard let (service, group) = try group(of: reader) else { return }
            let unread = try service.conversation(group).compactMap { item -> MessageID? in
                if case .message(let m) = item, m.direction == .incoming { return m.id } else { return nil }
            }
            guard !unread.isEmpty else { return }
            _ = try service.markShown(group.conversation, ids: unread)
            groupChecks.read(unread, by: reader)
            reader.engine?.wake()
        case .groupChange(let who):
            try changeGroup(by: accounts[who])
        case .resendGroup(let who):
            try pressResendInGroup(accounts[who])
        case .rotateKeys(let who):
            let account = accounts[who]
            do { try account.commands(clock).rotateKeys() } catch { return trace.note("\(account.name) cannot rotate: \(error)") }
            trace.note("\(account.name) rotated their keys")
            account.engine?.wake()
        default:
            try perform(action)
        }
    }

    /// Whether someone has not yet accepted the account's rotated key. A backup carries the
    /// account key, not the one it rotated from: restored before everyone took the rotation,
    /// the install meets Keys don't match (one-to-one as well; not what the group mode
    /// checks), so the group mode does not reinstall such an account.
    func awaitsRotationAcceptance(_ account: SimulatedAccount) throws -> Bool {
        let service = try account.commands(clock)
        guard try service.identity().previous != nil else { return false }
        return try service.store.contacts(includingDeleted: true, includingMembers: true).contains { !$0.rotationAcknowledged }
    }

    /// A change of the roster: the admin (the first account) takes a member out or brings
    /// back one who is out; anyone else leaves. What the log does not take is no change.
    private func changeGroup(by account: SimulatedAccount) throws {
        guard let (service, group) = try group(of: account), group.state == .current else { return }
        let members = try service.groupMembers(group)
        do {
            if members.first?.isAdmin == true {
                let out = members.filter { !$0.isSelf && $0.state != "current" }.map(\.name)
                let current = members.filter { !$0.isSelf && $0.state == "current" }.map(\.name)
                if let back = out.first, random.chance(0.6) || current.count <= 1 {
                    try service.addMembers(group, [back])
                    trace.note("\(account.name) adds \(back) to the group again")
                } else if let gone = current.randomElement(using: &random) {
                    try service.removeMember(group, gone)
                    trace.note("\(account.name) removes \(gone) from the group")
                }
            } else {
                try service.leaveGroup(group)
                trace.note("\(account.name) leaves the group")
            }
        } catch {
            trace.note("\(account.name)'s change of the group was not taken: \(error)")
        }
        account.engine?.wake()
    }

    /// `account` reacts to a message of the group it holds (`react(in:…)`).
    private func react(_ account: SimulatedAccount, _ service: AccountService, _ group: StoredGroup) throws {
        try react(account, service, in: .group(group), items: try service.conversation(group), with: nil)
    }

    /// `account` reacts to a message of a conversation it holds: one of a few emoji, or takes
    /// its reaction back (a third of the time, when it has one). `contact`: the contact's
    /// name, nil in the group.
    func react(_ account: SimulatedAccount, _ service: AccountService, in conversation: ConversationTarget, items: [ConversationItem],
               with contact: String?) throws {
        guard let message = ReplyChecks.quotable(items, using: &itemRandom) else { return }
        let mine = items.contains { item in
            if case .message(let m) = item, m.id == message { return m.reactions.contains { $0.from == "You" } } else { return false }
        }
        let emoji: String? = mine && itemRandom.chance(0.33) ? nil : ["👍", "❤️", "😂", "🎉"].randomElement(using: &itemRandom)!
        do {
            let item = try service.react(in: conversation, to: message, emoji: emoji)
            reactions.reacted(item, by: account, to: message, with: contact)
            trace.note("\(account.name) reacts \(emoji ?? "(taken back)") to \(message.hex): \(item.hex)")
        } catch {
            trace.note("\(account.name) cannot react: \(error)")
        }
    }

    /// The user presses Resend in the group: what its messages' statuses and rows offer.
    func pressResendInGroup(_ account: SimulatedAccount) throws {
        guard let (service, group) = try group(of: account), group.state == .current else { return }
        var offered: [MessageID] = []
        for item in try service.conversation(group) {
            switch item {
            case .message(let m) where m.direction == .outgoing && m.status?.isFinal == false:
                if m.status?.offersResend == true || m.deliveries?.contains(where: { $0.isCurrent && $0.status.offersResend }) == true {
                    offered.append(m.id)
                }
            case .row(let row) where row.action == .resend:
                offered += row.messageIDs
            default:
                break
            }
        }
        offered = Array(Set(offered)).sorted { $0.hex < $1.hex }
        guard !offered.isEmpty else { return }
        do {
            let outcome = try service.resendShown(.group(group), ids: offered)
            trace.note("\(account.name) presses Resend in the group: \(offered.count) offered, \(outcome.resent.count) resent")
        } catch {
            trace.note("\(account.name) presses Resend in the group: \(error)")
        }
        account.engine?.wake()
    }

    /// Heals as every run does, then until every member still in a roster has every message
    /// written to them (Resend pressed in the group where it is offered), and the rosters agree.
    func healGroup() throws {
        for round in 0..<3 {
            for _ in 0..<12 {
                try runFor(10)
                try groupChecks.check(after: "healing the group, round \(round)")
                guard failures.isEmpty else { return }
                if try groupChecks.undelivered().isEmpty { break }
            }
            if try groupChecks.undelivered().isEmpty { break }
            for account in accounts { try pressResendInGroup(account) }
        }
        try runFor(120)
        try groupChecks.check(after: "the group healed")
        if failures.isEmpty { failures += try groupChecks.undelivered() }
        if failures.isEmpty { failures += try groupChecks.rostersDisagree() }
        if failures.isEmpty { failures += try reactionsDisagree().map { "after healing, " + $0 } }
        if failures.isEmpty { failures += try editsDisagree().map { "after healing, " + $0 } }
    }
}

/// What must hold of the group after every step, and at the end.
final class GroupInvariants {
    struct Written {
        let id: MessageID
        let from: String
        let install: Int
        /// The members it had a delivery to when it was written: no one else may store it.
        let to: Set<String>
        /// The heads of its author's log when it was written, and the author's account key.
        let heads: [ChangeID]
        let author: [UInt8]
    }

    private unowned let world: SimulatedWorld
    private var written: [MessageID: Written] = [:]
    private var order: [MessageID] = []
    /// Every group message each account ever stored, and showed.
    private var everStored: [String: Set<MessageID>] = [:]
    private var everRead: [String: Set<MessageID>] = [:]
    private var lastDelivery: [String: MessageStatus] = [:]
    /// Per account, the installs that ever reinstalled after a message was written to them:
    /// such a delivery may stay Sent (what the old install took left with it) unless resent.
    private var reinstalledAt: [String: Int64] = [:]
    private var writtenAt: [MessageID: Int64] = [:]

    init(world: SimulatedWorld) { self.world = world }

    var messageCount: Int { order.count }

    func sent(_ id: MessageID, from sender: SimulatedAccount, group: StoredGroup, service: AccountService) throws {
        guard let message = try service.store.message(conversation: group.conversation, id: id) else { return }
        var to: Set<String> = []
        for d in try service.store.deliveries(message: message.rowID) {
            if let name = try service.store.contact(id: d.member)?.name { to.insert(name) }
        }
        written[id] = Written(id: id, from: sender.name, install: sender.installs, to: to, heads: ChangeID.split(group.heads),
                              author: try service.store.account()?.publicKey ?? [])
        writtenAt[id] = world.clock.now()
        order.append(id)
    }

    func read(_ ids: [MessageID], by reader: SimulatedAccount) { everRead[reader.name, default: []].formUnion(ids) }


    func reinstalled(_ account: SimulatedAccount) { reinstalledAt[account.name] = world.clock.now() }

    private func fail(_ text: String) {
        world.failures.append(text)
        world.trace.note("FAILED: \(text)")
    }

    func check(after what: String) throws {
        for account in world.accounts {
            guard let (service, group) = try world.group(of: account) else { continue }
            var shown: Set<MessageID> = []
            let items = try service.conversation(group)
            for wrong in world.replies.wrongs(in: items, of: account.name) { fail("\(what): \(wrong)") }
            for item in items {
                guard case .message(let m) = item else { continue }
                if !shown.insert(m.id).inserted { fail("\(what): \(account.name) shows \(m.id.hex) twice in the group") }
                guard m.direction == .incoming, let record = written[m.id] else { continue }
                if everStored[account.name, default: []].insert(m.id).inserted {
                    world.trace.note("\(account.name) stored group message \(m.id.hex)")
                    if !record.to.contains(account.name) {
                        fail("\(what): \(account.name) stored \(m.id.hex), written by \(record.from) when \(account.name) was not in their roster")
                    }
                }
            }
        }
        for id in order {
            guard let record = written[id], let sender = world.accounts.first(where: { $0.name == record.from }),
                  sender.installs == record.install, let (service, group) = try world.group(of: sender),
                  let message = try service.store.message(conversation: group.conversation, id: id) else { continue }
            let deliveries = try service.store.deliveries(message: message.rowID)
            let shown = DeliverySummary(deliveries.filter(\.isCurrent).map(\.status)).shown
                ?? DeliverySummary(deliveries.map(\.status)).shown
            if shown != message.status { fail("\(what): group message \(id.hex) shows \(message.status?.rawValue ?? "none") but its deliveries sum to \(shown?.rawValue ?? "none")") }
            for d in deliveries {
                let member = try service.store.contact(id: d.member)?.name ?? "?"
                let key = "\(id.hex) to \(member)"
                let before = lastDelivery[key] ?? .sending
                guard d.status != before else { continue }
                if !Invariants.reachable(from: before).contains(d.status) {
                    fail("\(what): group message \(id.hex)'s delivery to \(member) went from \(before.rawValue) to \(d.status.rawValue)")
                }
                if d.status.isFinal && !before.isFinal, !(everStored[member]?.contains(id) ?? false) {
                    // What a check has not seen yet (stored and shown since the last one) is looked for now.
                    if !(try stores(member, id)) {
                        fail("\(what): group message \(id.hex)'s delivery to \(member) is \(d.status.rawValue) but \(member) never stored it")
                    }
                }
                if d.status == .read && before != .read, !(everRead[member]?.contains(id) ?? false) {
                    fail("\(what): group message \(id.hex)'s delivery to \(member) is Read but \(member) never showed it")
                }
                world.trace.note("\(record.from)'s \(id.hex) to \(member): \(before.rawValue) → \(d.status.rawValue)")
                lastDelivery[key] = d.status
            }
        }
    }

    /// Whether `member`'s current install holds the group message `id` now.
    private func stores(_ member: String, _ id: MessageID) throws -> Bool {
        guard let account = world.accounts.first(where: { $0.name == member }), let (service, group) = try world.group(of: account)
        else { return false }
        let found = try service.store.message(conversation: group.conversation, id: id) != nil
        if found { everStored[member, default: []].insert(id) }
        return found
    }

    /// After the heal: each message of a sender's current install, to each member current in
    /// its roster and in the group on their side, Delivered or Read — unless that member
    /// reinstalled after it was written and nothing could be resent (its Sent stays true).
    func undelivered() throws -> [String] {
        var stuck: [String] = []
        for id in order {
            guard let record = written[id], let sender = world.accounts.first(where: { $0.name == record.from }),
                  sender.installs == record.install, let (service, group) = try world.group(of: sender), group.state == .current,
                  let message = try service.store.message(conversation: group.conversation, id: id) else { continue }
            for d in try service.store.deliveries(message: message.rowID) where d.isCurrent && !d.status.isFinal {
                let member = try service.store.contact(id: d.member)?.name ?? "?"
                if let at = reinstalledAt[member], at >= writtenAt[id] ?? 0, d.status == .sent || d.status == .notConfirmed { continue }
                guard let account = world.accounts.first(where: { $0.name == member }),
                      let (theirService, theirs) = try world.group(of: account), theirs.state == .current else { continue }
                // Their log took the author out by a change the author had not seen when writing:
                // it may have come after that, and been dropped as their roster says (Sent stays true).
                if try theirService.store.transaction({ try Groups.log(theirs, $0) })?.tookOut(record.author, unseenAt: record.heads) == true { continue }
                stuck.append("after healing, \(record.from)'s group message \(id.hex) to \(member) is still \(d.status.rawValue)")
            }
        }
        return stuck
    }

    /// After the heal: every account still in the group holds the same roster.
    func rostersDisagree() throws -> [String] {
        var rosters: [String: Set<String>] = [:]
        for account in world.accounts {
            guard let (service, group) = try world.group(of: account) else { continue }
            let members = try service.groupMembers(group)
            world.trace.note("\(account.name)'s roster: " + members.map { "\($0.name) \($0.state)\($0.isAdmin ? " admin" : "")" }.joined(separator: ", "))
            guard group.state == .current else { continue }
            rosters[account.name] = Set(members.filter { $0.state == "current" }.map(\.name))
        }
        guard let first = rosters.values.first, rosters.values.contains(where: { $0 != first }) else { return [] }
        return ["after healing, the rosters differ: " + rosters.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.sorted())" }.joined(separator: "; ")]
    }
}
