import RChatCore
import RChatEngine
import RChatStore

/// What must hold after every step (docs/ARCHITECTURE.md, "Rules that keep statuses
/// true"): no status goes back, Delivered and Read only once the receiver committed (and
/// showed) the message, nothing shown twice, automatic resends at most once per message, within 72 hours and 50 a day per contact;
/// and at the end, every message Delivered.
final class Invariants {
    struct Sent {
        let id: MessageID
        let from: String
        let to: String
        /// The sender's install it was written on: a reinstall forgets it (README's limit:
        /// a reinstall keeps keys and contacts, not history).
        let install: Int
        /// Wall time it was written (the store's `created_at`).
        let createdAt: Int64
    }

    private unowned let world: SimulatedWorld
    private var sent: [MessageID: Sent] = [:]
    private var order: [MessageID] = []
    /// The last status each sender's store showed.
    private var lastStatus: [MessageID: MessageStatus] = [:]
    private var lastAutoResentAt: [MessageID: Int64] = [:]
    /// The last status of each delivery (message, member by name) the sender's store showed.
    private var lastDeliveryStatus: [DeliverySeen: MessageStatus] = [:]
    struct DeliverySeen: Hashable {
        let id: MessageID
        let member: String
    }
    /// When a check first saw each message Sent (the relay took it): no earlier than the
    /// relay's acknowledgement, from which the 72 hours of automatic resend count.
    private var firstSeenSent: [MessageID: Int64] = [:]
    /// Every message each account ever stored as received, and those it showed (read).
    private var everStored: [String: Set<MessageID>] = [:]
    private var everRead: [String: Set<MessageID>] = [:]
    /// (verifier, device owner) pairs waiting for a code entered again after a new phone.
    private var unverified: Set<[String]> = []
    /// README's limit ("When a contact loses their state"): a message without a
    /// receipt when its receiver started over may stay Sent — true, the relay took it — with
    /// no receipt ever: its receipt left with the old install, or the old install could not
    /// read it and its record of that went too. Resend is offered for such messages only
    /// when nothing could be resent automatically.
    private var mayStaySent: Set<MessageID> = []
    /// Resend goes only to the keys a message was written for: one whose contact's keys
    /// changed since (a new phone verified, a rotation) that no row offers is refused and
    /// keeps the status it had.
    private var mayStayForChangedKeys: Set<MessageID> = []
    private var userResends: Set<MessageID> = []

    init(world: SimulatedWorld) { self.world = world }

    var messageCount: Int { order.count }

    /// Per account install, the messages it ever showed, and those that disappeared since
    /// (their timer ran out; seen gone, or in its tombstones): one of those shown again is a
    /// failure, and one that disappeared before it got through is not owed delivery.
    private var everPresent: [String: Set<MessageID>] = [:]
    private var vanished: [String: Set<MessageID>] = [:]
    private var vanishedAnywhere: Set<MessageID> = []

    private func disappeared(_ present: Set<MessageID>, at account: SimulatedAccount, after what: String) {
        let key = "\(account.name)/\(account.installs)"
        for id in present where vanished[key]?.contains(id) == true {
            fail("\(what): \(account.name) shows \(id.hex) again after it disappeared")
        }
        let gone = everPresent[key, default: []].subtracting(present).subtracting(vanished[key] ?? [])
        if !gone.isEmpty {
            vanished[key, default: []].formUnion(gone)
            vanishedAnywhere.formUnion(gone)
            world.trace.note("\(account.name): \(gone.count) message(s) disappeared")
        }
        everPresent[key, default: []].formUnion(present)
    }

    /// Per pair of accounts (names sorted), the timer change that comes last
    /// (`TimerPolicy.replaces`), and the installs of both when it was made.
    private var latestTimer: [[String]: (change: TimerPolicy.Change, timer: DisappearingTimer, installs: [Int])] = [:]
    /// Changes the user made that were reported as set but were not in force right after.
    private var timersNotApplied: [String] = []
    /// Per pair, the changes each side made (by name), and the last change made, with
    /// whether its maker had seen every change the other side made before it: then it is
    /// the one both must end on, once delivered.
    private var timersMade: [[String]: [String: [TimerPolicy.Change]]] = [:]
    private var lastTimerMade: [[String]: (change: TimerPolicy.Change, by: String, sawAll: Bool)] = [:]

    /// The user set the timer: it must be in force on their side at once (its counter exceeds
    /// every one seen there, whatever either clock says), and it is the pair's latest unless a
    /// change made on the other side meanwhile comes after it.
    func timerSet(_ timer: DisappearingTimer, by id: MessageID, inForce: (timer: DisappearingTimer, setBy: TimerPolicy.Change?),
                  before: TimerPolicy.Change?, between a: SimulatedAccount, and b: SimulatedAccount) {
        guard let change = inForce.setBy, change.id == id, inForce.timer == timer else {
            timersNotApplied.append("\(a.name) set the timer with \(b.name) to \(timer.word) (\(id.hex)), "
                                    + "but \(inForce.timer.word) (set by \(inForce.setBy?.description ?? "none")) is in force")
            return
        }
        let (first, second) = a.name < b.name ? (a, b) : (b, a)
        let key = [first.name, second.name]
        let theirs = timersMade[key]?[b.name] ?? []
        let sawAll = theirs.allSatisfy { made in made == before || (before.map { !TimerPolicy.replaces(made, $0) } ?? false) }
        timersMade[key, default: [:]][a.name, default: []].append(change)
        lastTimerMade[key] = (change, a.name, sawAll)
        if TimerPolicy.replaces(change, latestTimer[key]?.change) {
            latestTimer[key] = (change, timer, [first.installs, second.installs])
        }
    }

    /// After healing: both sides of every pair that changed its timer show the latest change
    /// (a side reinstalled since starts over, and is not judged).
    func timersDisagree() throws -> [String] {
        var wrong = timersNotApplied
        for (key, latest) in latestTimer.sorted(by: { $0.key.joined() < $1.key.joined() }) {
            let sides = key.compactMap { name in world.accounts.first { $0.name == name } }
            guard sides.count == 2, sides.map(\.installs) == latest.installs else { continue }
            // Written before the receiver's keys changed, Resend refuses it by design (the user
            // must write it again): the sides may end apart (seed 582).
            if mayStayForChangedKeys.contains(latest.change.id) { continue }
            if let last = lastTimerMade[key], last.sawAll, last.change != latest.change {
                wrong.append("\(last.by)'s last timer change (\(last.change)), made after seeing every other, is not the one in force: \(latest.change)")
            }
            for (me, them) in [(sides[0], sides[1]), (sides[1], sides[0])] {
                let service = try me.commands(world.clock)
                let (timer, setBy) = try service.store.conversationTimer(contact: service.contact(named: them.name).id)
                if timer != latest.timer || setBy != latest.change {
                    wrong.append("after healing, \(me.name)'s timer with \(them.name) is \(timer.word) (set by \(setBy?.description ?? "none")), "
                                 + "not \(latest.timer.word) (set by \(latest.change))")
                }
            }
        }
        return wrong
    }

    func sent(_ id: MessageID, from: SimulatedAccount, to: SimulatedAccount) {
        sent[id] = Sent(id: id, from: from.name, to: to.name, install: from.installs, createdAt: world.clock.now())
        order.append(id)
        lastStatus[id] = .sending
    }

    func read(_ ids: [MessageID], by reader: SimulatedAccount) { everRead[reader.name, default: []].formUnion(ids) }
    func wasRead(_ id: MessageID, by reader: SimulatedAccount) -> Bool { everRead[reader.name]?.contains(id) ?? false }
    func userResent(_ ids: [MessageID]) { userResends.formUnion(ids) }
    func keptForChangedKeys(_ ids: [MessageID]) { mayStayForChangedKeys.formUnion(ids) }

    func reinstalled(_ account: SimulatedAccount, newPhone: Bool) {
        for (id, record) in sent where record.to == account.name && !(lastStatus[id]?.isFinal ?? false) {
            mayStaySent.insert(id)
        }
        // History stays with the old install; its marks of what was read do not move.
        if newPhone {
            for other in world.accounts where other !== account { unverified.insert([other.name, account.name]) }
        }
    }

    func needsVerification(of owner: SimulatedAccount, by verifier: SimulatedAccount) -> Bool {
        unverified.contains([verifier.name, owner.name])
    }

    func verified(_ owner: SimulatedAccount, by verifier: SimulatedAccount) { unverified.remove([verifier.name, owner.name]) }

    private func fail(_ what: String) {
        if world.failures.isEmpty { world.trace.note("INVARIANT BROKEN: \(what)") }
        world.failures.append(what)
    }

    /// How far each conversation's received messages were read, per account install.
    private var incomingRead: [String: Int64] = [:]
    /// Per account install, what a power cut lost that was not durable: the relay had no
    /// acknowledgement for it, so it must come back (`lostAtPowerCuts` at the end).
    private var lostAtCut: [String: Set<MessageID>] = [:]

    /// After `account`'s power cut and restart: what it held before (`held`) and lost is
    /// not a message that disappeared by its timer, but one that must come back.
    func powerCut(_ account: SimulatedAccount, held: Set<MessageID>) throws {
        let key = "\(account.name)/\(account.installs)"
        let lost = held.subtracting(try messagesHeld(by: account)).subtracting(try expired(at: account))
        // Positions of what was lost are used again.
        for name in incomingRead.keys where name.hasPrefix(key + "/") { incomingRead[name] = 0 }
        guard !lost.isEmpty else { return }
        everPresent[key, default: []].subtract(lost)
        lostAtCut[key, default: []].formUnion(lost)
        world.trace.note("\(account.name): \(lost.count) message(s) not yet durable lost at the power cut")
    }

    /// Of what power cuts lost, what never came back: nothing acknowledged may be lost (an
    /// acknowledged message is not sent again), nor anything the user wrote.
    func lostAtPowerCuts() throws -> [String] {
        var failures: [String] = []
        for account in world.accounts {
            let key = "\(account.name)/\(account.installs)"
            guard let lost = lostAtCut[key] else { continue }
            let missing = lost.subtracting(try messagesHeld(by: account)).subtracting(try expired(at: account))
                .subtracting(vanished[key] ?? [])
            for id in missing.sorted(by: { $0.hex < $1.hex }) {
                failures.append("\(account.name) lost \(id.hex) at a power cut and it never came back")
            }
        }
        return failures
    }
    private var checks = 0
    /// Each account's store as the last check read it: the commands' connection, and what
    /// others and it had written then (`otherWritersVersion`, `changesWritten`). A check
    /// that is not whole skips a store nothing wrote to since: what it judges (statuses,
    /// deliveries, what was stored) is read from the store alone and would be the same.
    private var lastRead: [String: (service: Weak<AccountService>, version: Int64, changes: Int64)] = [:]

    /// Reads the stores and checks the invariants against what was seen before: what was
    /// received and what statuses changed at every check, whole conversations as the view
    /// lists them (nothing shown twice) every tenth check and when `thorough`.
    func check(after what: String, thorough: Bool = false) throws {
        checks += 1
        let whole = thorough || checks % 10 == 0
        // Received first: a receipt that arrived in this step is judged against the
        // receiver's store as it is now.
        var outgoing: [(account: SimulatedAccount, message: StoredMessage, members: [ContactID: String])] = []
        for account in world.accounts {
            let service = try account.commands(world.clock)
            let version = try service.store.otherWritersVersion(), changes = service.store.changesWritten
            if !whole, let last = lastRead[account.name], last.service.object === service,
               last.version == version, last.changes == changes { continue }
            lastRead[account.name] = (Weak(service), version, changes)
            var present: Set<MessageID> = []
            let contacts = try service.store.contacts()
            let members = Dictionary(contacts.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
            for contact in contacts {
                if whole {
                    var shown: Set<MessageID> = []
                    let items = try service.conversation(contact.name)
                    for wrong in world.replies.wrongs(in: items, of: account.name) { fail("\(what): \(wrong)") }
                    for item in items {
                        guard case .message(let m) = item else { continue }
                        if !shown.insert(m.id).inserted { fail("\(what): \(account.name) shows \(m.id.hex) twice") }
                        present.insert(m.id)
                    }
                }
                let key = "\(account.name)/\(account.installs)/\(contact.id.rawValue)"
                for (id, position) in try service.store.incomingMessageIDs(contact: contact.id, after: incomingRead[key] ?? 0) {
                    incomingRead[key] = position
                    guard everStored[account.name, default: []].insert(id).inserted else { continue }
                    world.trace.note("\(account.name) stored \(id.hex)")
                }
                // Gone since (its timer ran out), perhaps before a check saw it: its id is kept.
                for row in try service.store.database.query("SELECT id, incoming FROM expired_messages WHERE conversation_id = ?",
                                                            [.integer(contact.id.rawValue)]) {
                    guard let id = MessageID(bytes: try row.blob("id")) else { continue }
                    if try row.int64("incoming") == 1, everStored[account.name, default: []].insert(id).inserted {
                        world.trace.note("\(account.name) stored \(id.hex) (gone since)")
                    }
                    vanished["\(account.name)/\(account.installs)", default: []].insert(id)
                    vanishedAnywhere.insert(id)
                }
                // Only what can still change: from the oldest message not yet final.
                let open = order.lazy.compactMap { self.sent[$0] }.filter {
                    $0.from == account.name && $0.to == contact.name && $0.install == account.installs
                        && !(self.lastStatus[$0.id]?.isFinal ?? false)
                }
                guard let since = open.map(\.createdAt).min() else { continue }
                for message in try service.store.outgoingMessages(contact: contact.id, since: since) {
                    outgoing.append((account, message, members))
                }
            }
            if whole { disappeared(present, at: account, after: what) }
        }
        for (account, message, members) in outgoing {
            let id = message.id
            guard let record = sent[id], record.from == account.name, record.install == account.installs,
                  let status = message.status else { continue }
            try checkDeliveries(of: message, status: status, record: record, members: members,
                                in: try account.commands(world.clock).store, after: what)
            let before = lastStatus[id] ?? .sending
            if status != before {
                world.trace.note("\(record.from)→\(record.to) \(id.hex): \(before.rawValue) → \(status.rawValue)")
                if !Self.reachable(from: before).contains(status) {
                    fail("\(what): \(record.from)→\(record.to) \(id.hex) went from \(before.rawValue) to \(status.rawValue)")
                }
                if status.isFinal && !before.isFinal, !(everStored[record.to]?.contains(id) ?? false) {
                    fail("\(what): \(id.hex) is \(status.rawValue) at \(record.from) but \(record.to) never stored it")
                }
                if status == .read && before != .read, !(everRead[record.to]?.contains(id) ?? false) {
                    fail("\(what): \(id.hex) is Read at \(record.from) but \(record.to) never showed it")
                }
                lastStatus[id] = status
                if status == .sent, firstSeenSent[id] == nil { firstSeenSent[id] = world.clock.now() }
            }
            if let at = message.autoResentAt {
                if let earlier = lastAutoResentAt[id], earlier != at {
                    fail("\(what): \(id.hex) was resent automatically twice (at \(earlier) and \(at))")
                }
                // From when the relay took it (seen Sent), else from when it was written.
                let took = firstSeenSent[id] ?? message.createdAt
                if at - took > ResendPolicy.window {
                    fail("\(what): \(id.hex) was resent automatically \(at - took) s after the relay took it (over 72 h)")
                }
                lastAutoResentAt[id] = at
            }
        }
        var autoResends: [String: [Int64]] = [:]
        for (id, at) in lastAutoResentAt {
            if let record = sent[id] { autoResends["\(record.from)→\(record.to)", default: []].append(at) }
        }
        for (pair, times) in autoResends {
            let sorted = times.sorted()
            var start = 0
            for end in sorted.indices {
                while sorted[end] - sorted[start] >= ResendPolicy.day { start += 1 }
                if end - start + 1 > ResendPolicy.dailyLimit {
                    fail("\(what): \(pair) has \(end - start + 1) automatic resends within 24 h")
                    break
                }
            }
        }
    }

    /// Per member of its conversation (issue 29): each delivery's status never goes back,
    /// is final only once that member stored the message and Read only once that member
    /// showed it, and what the message shows is `DeliverySummary`'s lowest over its current
    /// members. A direct conversation's message has one delivery, to its contact.
    private func checkDeliveries(of message: StoredMessage, status: MessageStatus, record: Sent, members: [ContactID: String],
                                 in store: Store, after what: String) throws {
        let id = message.id
        let deliveries = try store.deliveries(message: message.rowID)
        if deliveries.count != 1 || deliveries.first?.member != message.contact {
            fail("\(what): \(record.from)→\(record.to) \(id.hex) has \(deliveries.count) deliveries, to \(deliveries.map { members[$0.member] ?? "?" })")
        }
        let shown = DeliverySummary(deliveries.filter(\.isCurrent).map(\.status)).shown
        if shown != status {
            fail("\(what): \(id.hex) shows \(status.rawValue) but its deliveries sum to \(shown?.rawValue ?? "none")")
        }
        for delivery in deliveries {
            let member = members[delivery.member] ?? "contact \(delivery.member.rawValue)"
            let key = DeliverySeen(id: id, member: member)
            let before = lastDeliveryStatus[key] ?? .sending
            guard delivery.status != before else { continue }
            if !Self.reachable(from: before).contains(delivery.status) {
                fail("\(what): \(id.hex)'s delivery to \(member) went from \(before.rawValue) to \(delivery.status.rawValue)")
            }
            if delivery.status.isFinal && !before.isFinal, !(everStored[member]?.contains(id) ?? false) {
                fail("\(what): \(id.hex)'s delivery to \(member) is \(delivery.status.rawValue) but \(member) never stored it")
            }
            if delivery.status == .read && before != .read, !(everRead[member]?.contains(id) ?? false) {
                fail("\(what): \(id.hex)'s delivery to \(member) is Read but \(member) never showed it")
            }
            lastDeliveryStatus[key] = delivery.status
        }
    }

    /// Whether every message the current installs hold is Delivered or Read.
    func everythingDelivered() -> Bool { undelivered().isEmpty }

    /// Of the messages resent by hand to a new phone (id → its owner), those it never stored:
    /// seed 000 says Resend reaches a new phone before its code is entered again.
    func notStored(_ owed: [MessageID: String]) -> [String] {
        owed.sorted { $0.key.hex < $1.key.hex }.compactMap { id, owner in
            if everStored[owner]?.contains(id) == true || vanishedAnywhere.contains(id) { return nil }
            return "resent by hand to \(owner)'s new phone, \(id.hex) never reached it (\(lastStatus[id]?.rawValue ?? "?"))"
        }
    }

    func undelivered() -> [String] {
        var stuck: [String] = []
        for id in order {
            guard let record = sent[id], let account = world.accounts.first(where: { $0.name == record.from }),
                  record.install == account.installs, let status = lastStatus[id], !status.isFinal else { continue }
            // Its timer ran out on one side before it got through: gone, as it should be.
            if vanishedAnywhere.contains(id) { continue }
            if mayStaySent.contains(id), status == .sent || status == .notConfirmed { continue }
            if mayStayForChangedKeys.contains(id) { continue }
            let stored = everStored[record.to]?.contains(id) ?? false
            stuck.append("after healing, \(record.from)→\(record.to) \(id.hex) is still \(status.rawValue)"
                         + (stored ? " (\(record.to) stored it)" : " (\(record.to) never stored it)"))
        }
        return stuck
    }

    /// Every status a message can reach from `status` through the lattice's events.
    static func reachable(from status: MessageStatus) -> Set<MessageStatus> {
        var seen: Set<MessageStatus> = [status]
        var frontier = [status]
        while let s = frontier.popLast() {
            for event in StatusEvent.allCases {
                let next = StatusLattice.raise(s, event)
                if seen.insert(next).inserted { frontier.append(next) }
            }
        }
        return seen
    }
}

// MARK: power cuts

extension Invariants {
    /// Every message `account` holds now, in every conversation.
    func messagesHeld(by account: SimulatedAccount) throws -> Set<MessageID> {
        let service = try account.commands(world.clock)
        var held: Set<MessageID> = []
        for contact in try service.store.contacts() {
            for case .message(let m) in try service.conversation(contact.name) { held.insert(m.id) }
        }
        return held
    }

    /// Messages gone by their timer (in the tombstones).
    func expired(at account: SimulatedAccount) throws -> Set<MessageID> {
        let rows = try account.commands(world.clock).store.database.query("SELECT id FROM expired_messages")
        return Set(try rows.compactMap { MessageID(bytes: try $0.blob("id")) })
    }
}

/// A reference that does not keep its object alive (a store closed by a power cut stays closed).
struct Weak<Object: AnyObject> {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}
