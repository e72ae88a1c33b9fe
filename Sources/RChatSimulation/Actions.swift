import Foundation
import RChatCore
import RChatEngine

/// What one step of a run does.
enum Action: CustomStringConvertible {
    case send(from: Int, to: Int)
    case read(who: Int, contact: Int)
    case resend(who: Int, contact: Int)
    case wait
    case faults(MemoryNetwork.Faults)
    case partition(Int)
    case rejoin(Int)
    case cut(Int)
    case restart(Int)
    case kill(Int)
    case killRelay
    /// The power goes on one machine (an account's phone, or the relay's when it is the
    /// number of accounts): its processes stop at once and its disk loses what was not synced.
    case powerCut(Int)
    case allOffline(hours: Double)
    case reinstall(Int, newPhone: Bool)
    case verify(who: Int, contact: Int)
    /// Sets the conversation's disappearing timer: both sides must end on the latest change,
    /// and a message that disappeared must never be shown again.
    case timer(who: Int, contact: Int, DisappearingTimer)
    /// The group mode's (`GroupWorld.swift`).
    case groupSend(from: Int)
    case groupRead(who: Int)
    case groupChange(who: Int)
    case resendGroup(who: Int)
    /// `rchat keys rotate`: a new account key, announced to every channel, and each group's
    /// log told by a change signed with the old one.
    case rotateKeys(Int)

    var description: String {
        switch self {
        case let .send(from, to): return "send \(from)→\(to)"
        case let .read(who, contact): return "read \(who)←\(contact)"
        case let .resend(who, contact): return "resend \(who)→\(contact)"
        case .wait: return "wait"
        case let .faults(f): return "faults drop \(f.drop) dup \(f.duplicate) reorder \(f.reorder) delay \(f.delay)"
        case let .partition(who): return "partition \(who)"
        case let .rejoin(who): return "rejoin \(who)"
        case let .cut(n): return "cut connection \(n)"
        case let .restart(who): return "restart engine \(who)"
        case let .kill(who): return "kill engine \(who)"
        case .killRelay: return "kill relay"
        case .powerCut(let machine): return "power cut \(machine)"
        case let .allOffline(hours): return "everyone offline \(String(format: "%.1f", hours)) h"
        case let .reinstall(who, newPhone): return newPhone ? "new phone \(who)" : "reinstall \(who)"
        case let .verify(who, contact): return "verify \(who) enters \(contact)'s code"
        case let .timer(who, contact, timer): return "timer \(who)→\(contact) \(timer.word)"
        case let .groupSend(from): return "group send \(from)"
        case let .groupRead(who): return "group read \(who)"
        case let .groupChange(who): return "group change by \(who)"
        case let .resendGroup(who): return "group resend \(who)"
        case let .rotateKeys(who): return "rotate keys \(who)"
        }
    }
}

extension SimulatedWorld {
    /// The network's next faults: none, or a mix of drops, copies, reordering and delay.
    func randomFaults() -> Action {
        if random.chance(0.4) { return .faults(.none) }
        var faults = MemoryNetwork.Faults()
        faults.drop = random.chance(0.5) ? random.uniform(0...0.05) : 0
        faults.duplicate = random.chance(0.3) ? random.uniform(0...0.03) : 0
        faults.reorder = random.chance(0.3) ? random.uniform(0...0.03) : 0
        faults.delay = 0.001...random.uniform(0.002...0.5)
        return .faults(faults)
    }

    func chooseAction() -> Action {
        let n = accounts.count
        let who = Int.random(in: 0..<n, using: &random)
        var other = Int.random(in: 0..<(n - 1), using: &random)
        if other >= who { other += 1 }
        let roll = random.uniform(0...1)
        switch roll {
        case ..<0.40: return .send(from: who, to: other)
        case ..<0.50: return .read(who: who, contact: other)
        case ..<0.54: return .resend(who: who, contact: other)
        case ..<0.66: return .wait
        case ..<0.71:
            return randomFaults()
        case ..<0.74: return network.partitioned.isEmpty ? .partition(who) : .rejoin(who)
        case ..<0.78: return .cut(Int.random(in: 0..<8, using: &random))
        case ..<0.83: return .restart(who)
        case ..<0.88: return .kill(who)
        case ..<0.905: return .killRelay
        case ..<0.91: return .allOffline(hours: random.uniform(0.5...30))
        case ..<0.916: return .reinstall(who, newPhone: random.chance(0.4))
        case ..<0.93: return .verify(who: who, contact: other)
        case ..<0.95:
            // 30 seconds runs out inside a run; 4 weeks never does.
            let timers: [DisappearingTimer] = [.off, .thirtySeconds, .fourWeeks]
            return .timer(who: who, contact: other, timers[Int.random(in: 0..<timers.count, using: &random)])
        case ..<0.975: return .powerCut(random.chance(0.25) ? n : who)
        default: return .wait
        }
    }

    func perform(_ action: Action) throws {
        switch action {
        case let .send(from, to):
            let sender = accounts[from], receiver = accounts[to]
            let text = "m\(invariants.messageCount + 1) \(sender.name)→\(receiver.name)"
            let service = try sender.commands(clock)
            // A third of the messages answer one of the conversation's.
            var content = MessageContent.text(text)
            if itemRandom.chance(0.3), let target = ReplyChecks.quotable(try service.conversation(receiver.name), using: &itemRandom) {
                content = .reply(Reply(target: target, text: text))
            }
            let id = try service.send(to: receiver.name, content: content)
            if let target = content.quoted { replies.wrote(id, quoting: target) }
            invariants.sent(id, from: sender, to: receiver)
            // A quarter of the time, a reaction too (or one taken back), to a message there.
            if itemRandom.chance(0.25), case .ok = try service.contact(named: receiver.name).state {
                try react(sender, service, in: .contact(try service.contact(named: receiver.name)),
                          items: try service.conversation(receiver.name), with: receiver.name)
            }
            // Now and then an edit, or a delete for everyone, of one of the sender's own.
            if itemRandom.chance(0.15), case .ok = try service.contact(named: receiver.name).state {
                try change(sender, service, in: .contact(try service.contact(named: receiver.name)),
                           items: try service.conversation(receiver.name), with: receiver.name)
            }
            trace.note("\(sender.name) wrote \(id.hex) to \(receiver.name)" + (content.quoted.map { ", replying to \($0.hex)" } ?? ""))
            sender.engine?.wake()
        case let .read(who, contact):
            let reader = accounts[who], writer = accounts[contact]
            let service = try reader.commands(clock)
            let unread = try service.conversation(writer.name).compactMap { item -> MessageID? in
                if case .message(let m) = item, m.direction == .incoming { return m.id } else { return nil }
            }.filter { !invariants.wasRead($0, by: reader) }
            guard !unread.isEmpty else { return }
            let marked = try service.markShown(service.contact(named: writer.name).id.conversation, ids: unread)
            invariants.read(marked, by: reader)
            reader.engine?.wake()
        case let .resend(who, contact):
            try pressResend(accounts[who], to: accounts[contact])
        case .wait:
            try runFor(random.uniform(1...20))
        case .faults(let faults):
            network.faults = faults
        case .partition(let who):
            network.partitioned.insert(accounts[who].name)
            network.cutAll(of: accounts[who].name, "partitioned")
        case .rejoin(let who):
            network.partitioned.remove(accounts[who].name)
        case .cut(let n):
            let open = network.openConnections
            if !open.isEmpty { network.cut(open[n % open.count], "cut") }
        case .restart(let who):
            let account = accounts[who]
            account.stop(in: self)
            try runFor(random.uniform(0...3))
            try account.start(in: self)
        case .kill(let who):
            let account = accounts[who]
            guard account.isRunning else { return try account.start(in: self) }
            if account.hasUnsyncedCommits { trace.note("\(account.name): killed between a commit and its sync") }
            account.crash(in: self)
            try runFor(random.uniform(0...3))
            try account.start(in: self)
        case .powerCut(let machine):
            let onRelay = machine == accounts.count
            let held = onRelay ? [] : try invariants.messagesHeld(by: accounts[machine])
            let unsynced = onRelay ? relay.powerCut(seed: random.next()) : accounts[machine].powerCut(seed: random.next(), in: self)
            powerCuts += 1
            if unsynced > 0 { powerCutsLosingData += 1 }
            if !onRelay { try invariants.powerCut(accounts[machine], held: held) }
            try runFor(random.uniform(0...(onRelay ? 5 : 3)))
            if onRelay { try relay.start() } else { try accounts[machine].start(in: self) }
        case .killRelay:
            relay.crash()
            try runFor(random.uniform(0...5))
            try relay.start()
        case .allOffline(let hours):
            for account in accounts { account.stop(in: self) }
            try jump(hours * 3600)
            for account in accounts { try account.start(in: self) }
        case let .reinstall(who, newPhone):
            let account = accounts[who]
            if groupInvariants != nil, try awaitsRotationAcceptance(account) {
                return trace.note("\(account.name) does not reinstall: some have not taken their rotation yet")
            }
            account.stop(in: self)
            try runFor(1)
            try account.reinstall(newPhone: newPhone, in: self)
            invariants.reinstalled(account, newPhone: newPhone)
            groupInvariants?.reinstalled(account)
            try account.start(in: self)
        case let .verify(who, contact):
            let a = accounts[who], b = accounts[contact]
            guard invariants.needsVerification(of: b, by: a) else { return }
            try introduce(b, to: a)
            invariants.verified(b, by: a)
        case let .timer(who, contact, timer):
            let a = accounts[who], b = accounts[contact]
            // The first account's ids are ten years behind when it changes a timer (every
            // other one is ten years ahead of it; ids begin with the writer's clock): its
            // change must take effect all the same, and both sides converge.
            let service = who == 0 ? try AccountService(locations: a.locations, clock: SkewedClock(clock, by: -10 * 365 * 86_400))
                                   : try a.commands(clock)
            let contact = try service.contact(named: b.name)
            guard contact.state == .ok else { return }
            let before = try service.store.conversationTimer(contact: contact.id).setBy
            let id = try service.setTimer(timer, for: contact)
            let inForce = try service.store.conversationTimer(contact: contact.id)
            invariants.sent(id, from: a, to: b)
            invariants.timerSet(timer, by: id, inForce: inForce, before: before, between: a, and: b)
            trace.note("\(a.name) set the timer with \(b.name) to \(timer.word) (\(inForce.setBy?.description ?? id.hex))")
            a.engine?.wake()
        case .groupSend, .groupRead, .groupChange, .resendGroup, .rotateKeys:
            try performGroupAction(action)
        }
    }

    /// The user presses Resend on what offers it: messages whose status does, and rows with
    /// a Resend action (a contact who started over: "N messages may not have reached them",
    /// which keep their status). Nothing to resend is not an error.
    @discardableResult
    func pressResend(_ account: SimulatedAccount, to contact: SimulatedAccount) throws -> [MessageID] {
        let service = try account.commands(clock)
        // Strangers met through a group have no conversation of their own.
        guard try service.store.contact(named: contact.name) != nil else { return [] }
        var offered: [MessageID] = []
        var statuses: [MessageID: MessageStatus] = [:]
        for item in try service.conversation(contact.name) {
            switch item {
            case .message(let m) where m.direction == .outgoing:
                statuses[m.id] = m.status
                // Offered by its status, or held back for a new phone not verified (`waiting`).
                if m.status?.offersResend == true || m.waiting != nil { offered.append(m.id) }
            case .row(let row) where row.action == .resend:
                offered += row.messageIDs
            default:
                break
            }
        }
        offered = offered.filter { statuses[$0].map { !$0.isFinal } ?? false }
        offered = Array(Set(offered)).sorted { $0.hex < $1.hex }
        guard !offered.isEmpty else { return [] }
        let outcome = try service.resend(contact.name, ids: offered)
        let resent = outcome.resent
        trace.note("\(account.name) presses Resend for \(contact.name): \(offered.count) offered, \(resent.count) resent"
                   + (outcome.keptForChangedKeys.isEmpty ? "" : ", \(outcome.keptForChangedKeys.count) refused: written before the keys changed"))
        invariants.userResent(resent)
        invariants.keptForChangedKeys(outcome.keptForChangedKeys)
        account.engine?.wake()
        return resent
    }

    /// Seed 000, "Tap to resend": before anyone enters a new phone's code, its contacts press
    /// Resend, and what they resent by hand must reach that phone (stored there) — the
    /// automatic path alone waits for the code. A press counts for the devices shown when it
    /// was made: one made before a newer phone's row ("Sam is using a new device…") leaves
    /// the message waiting for it, and the user presses again, as the row asks.
    func resendToNewPhones() throws {
        var owed: [MessageID: String] = [:]
        for round in 0..<3 {
            var pressed = 0
            for a in accounts {
                for b in accounts where b !== a && invariants.needsVerification(of: b, by: a) {
                    guard try a.commands(clock).contact(named: b.name).state == .ok else { continue }
                    let resent = try pressResend(a, to: b)
                    for id in resent { owed[id] = b.name }
                    pressed += resent.count
                }
            }
            if pressed > 0 { trace.note("before any new phone is verified: \(pressed) message(s) resent by hand to one (round \(round))") }
            guard !owed.isEmpty else { return }
            for _ in 0..<12 {
                try runFor(10)
                try invariants.check(after: "resending by hand to new phones, round \(round)")
                guard failures.isEmpty else { return }
                if invariants.notStored(owed).isEmpty { return }
            }
        }
        failures += invariants.notStored(owed)
    }

    /// The network heals, every engine and the relay run, what is resent by hand to a new
    /// phone reaches it, every new device is verified and the users press Resend where it is
    /// offered: then every message must be Delivered, and what a power cut lost be back.
    func healAndFinish() throws {
        try healAndDeliver()
        if failures.isEmpty, groupInvariants != nil { try healGroup() }
        if failures.isEmpty { failures += try invariants.lostAtPowerCuts() }
    }

    private func healAndDeliver() throws {
        trace.note("heal")
        network.faults = .none
        network.partitioned = []
        if !relay.isUp { try relay.start() }
        for account in accounts where !account.isRunning { try account.start(in: self) }
        try resendToNewPhones()
        guard failures.isEmpty else { return }
        for a in accounts {
            for b in accounts where b !== a && invariants.needsVerification(of: b, by: a) {
                try introduce(b, to: a)
                invariants.verified(b, by: a)
            }
        }
        var delivered = false
        for round in 0..<3 {
            // Up to two minutes for what recovers by itself (reconnecting can take minutes).
            for _ in 0..<12 {
                try runFor(10)
                try invariants.check(after: "healing, round \(round)")
                guard failures.isEmpty else { return }
                if invariants.everythingDelivered() { break }
            }
            try invariants.check(after: "healing, round \(round)", thorough: true)
            guard failures.isEmpty else { return }
            if invariants.everythingDelivered() { delivered = true; break }
            for a in accounts { for b in accounts where b !== a { try pressResend(a, to: b) } }
        }
        if !delivered {
            try runFor(120)
            try invariants.check(after: "healed", thorough: true)
            if failures.isEmpty { failures += invariants.undelivered() }
        }
        // Checked whichever way the heal ended (before, only when it took the last two minutes).
        if failures.isEmpty { failures += try invariants.timersDisagree() }
        if failures.isEmpty { failures += try reactionsDisagree().map { "after healing, " + $0 } }
        if failures.isEmpty { failures += try editsDisagree().map { "after healing, " + $0 } }
    }
}
