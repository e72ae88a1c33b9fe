import RChatCore
import RChatCrypto
import XCTest

/// One person with an account key and the contact code it signed.
private struct Person {
    let key: SigningKey
    let code: ContactCode

    /// Keys from the name: the same people, the same change ids, every run.
    init(_ name: String) {
        key = Self.key(name + " account")
        code = ContactCode.signed(name: name, account: key, device: Self.key(name + " device").publicKey,
                                  relay: RelayAddress(host: "127.0.0.1", port: 7000, publicKey: [UInt8](repeating: 5, count: 32)),
                                  inviteToken: [UInt8](repeating: 6, count: 16))
    }

    /// The same person after `keys rotate` (the `n`th time): a new account key, the same device.
    init(_ name: String, rotated n: Int, device: String? = nil) {
        // `device`: another's device (a copy of the old key elsewhere naming its own).
        key = Self.key(name + " account \(n)")
        code = ContactCode.signed(name: name, account: key, device: Self.key((device ?? name) + " device").publicKey,
                                  relay: RelayAddress(host: "127.0.0.1", port: 7000, publicKey: [UInt8](repeating: 5, count: 32)),
                                  inviteToken: [UInt8](repeating: 6, count: 16))
    }

    var account: [UInt8] { key.publicKey }

    private static func key(_ label: String) -> SigningKey {
        var seed = Hash.blake2b(Array(label.utf8))
        return try! SigningKey(seed: SecretBytes(consuming: &seed))
    }
}

/// The membership log (DESIGN.md §16): the change's one encoding and its signature
/// (`MembershipChange`, RChatCrypto's verification), and the pure rule every member folds
/// the log by (`GroupLog`, `GroupRoster.applying`): who may make which change, what waits,
/// what is refused, and that members holding the same changes hold the same roster.
final class MembershipLogTests: XCTestCase {
    private let alice = Person("Alice"), bob = Person("Bob"), carol = Person("Carol"), dave = Person("Dave")

    private func create(_ members: [Person] = [], by creator: Person? = nil, name: String = "Friends") -> (VerifiedChange, GroupLog) {
        let creator = creator ?? alice
        let change = MembershipChange.signed(.create(name: name, members: [creator.code] + members.map(\.code)), group: nil, counter: 0, parents: [],
                                             by: creator.key)
        return (change, try! GroupLog(create: change))
    }

    @discardableResult
    private func apply(_ action: MembershipChange.Action, by person: Person, to log: inout GroupLog) -> (VerifiedChange, GroupLog.Outcome) {
        let change = MembershipChange.next(action, in: log, by: person.key)
        return (change, log.receive(change))
    }

    private func names(_ log: GroupLog) -> [String] { log.roster.members.map(\.code.name) }

    // MARK: the encoding

    private func everyKind(_ log: GroupLog) -> [MembershipChange] {
        [.add([bob.code, carol.code]), .remove(member: bob.account), .leave, .rename("Climbing"), .role(member: bob.account, .admin),
         .role(member: bob.account, .member), .timer(seconds: 3600), .timer(seconds: 0), .rekey(Person("Alice", rotated: 1).code)]
            .map { MembershipChange.next($0, in: log, by: alice.key).change }
    }

    func testEveryKindOfChangeHasOneEncodingThatDecodesToIt() throws {
        let (create, log) = create([dave])
        for change in [create.change] + everyKind(log) {
            let bytes = change.encoded
            XCTAssertEqual(try MembershipChange(decoding: bytes), change)
            XCTAssertEqual(try MembershipChange.verified(decoding: bytes).id, change.id)
            for cut in 0..<bytes.count {
                XCTAssertThrowsError(try MembershipChange(decoding: Array(bytes.prefix(cut))), "cut at \(cut) of \(bytes.count)")
            }
            XCTAssertThrowsError(try MembershipChange(decoding: bytes + [0])) { XCTAssertEqual($0 as? MembershipChange.DecodeError, .badField("length (bytes after the signature)")) }
        }
    }

    func testTheDecoderRefusesWhatIsNotTheCanonicalEncoding() throws {
        let (create, log) = create([bob])
        var bytes = MembershipChange.next(.leave, in: log, by: bob.key).change.encoded
        bytes[0] = 2
        XCTAssertThrowsError(try MembershipChange(decoding: bytes)) { XCTAssertEqual($0 as? MembershipChange.DecodeError, .unsupportedVersion(2)) }
        bytes[0] = 1
        bytes[1] = 9
        XCTAssertThrowsError(try MembershipChange(decoding: bytes)) { XCTAssertEqual($0 as? MembershipChange.DecodeError, .unknownKind(9)) }

        func refused(_ change: MembershipChange, _ field: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertThrowsError(try MembershipChange(decoding: change.encoded), file: file, line: line) {
                XCTAssertEqual($0 as? MembershipChange.DecodeError, .badField(field), file: file, line: line)
            }
        }
        let group = log.group, parent = create.id, other = ChangeID([UInt8](repeating: 0xff, count: 32))!
        var twoParents = MembershipChange(group: group, author: bob.account, counter: 2, parents: [parent, other], action: .leave, signature: [UInt8](repeating: 0, count: 64))
        twoParents.parents = [other, parent]
        refused(twoParents, "order of parents")
        twoParents.parents = [parent, parent]
        refused(twoParents, "order of parents")
        refused(MembershipChange(group: group, author: bob.account, counter: 1, parents: [], action: .leave, signature: [UInt8](repeating: 0, count: 64)), "parents")
        refused(MembershipChange(group: nil, author: alice.account, counter: 0, parents: [parent], action: .create(name: "F", members: [alice.code]),
                                 signature: [UInt8](repeating: 0, count: 64)), "parents")
        refused(MembershipChange(group: nil, author: alice.account, counter: 1, parents: [], action: .create(name: "F", members: [alice.code]),
                                 signature: [UInt8](repeating: 0, count: 64)), "counter")
        refused(MembershipChange(group: nil, author: alice.account, counter: 0, parents: [], action: .create(name: "F", members: [bob.code, alice.code]),
                                 signature: [UInt8](repeating: 0, count: 64)), "creator's code")
        refused(MembershipChange(group: group, author: alice.account, counter: 1, parents: [parent], action: .add([bob.code, bob.code]),
                                 signature: [UInt8](repeating: 0, count: 64)), "member named twice")
        refused(MembershipChange(group: group, author: alice.account, counter: 1, parents: [parent], action: .add([alice.code]),
                                 signature: [UInt8](repeating: 0, count: 64)), "member added by itself")
        refused(MembershipChange(group: group, author: alice.account, counter: 1, parents: [parent], action: .add([]),
                                 signature: [UInt8](repeating: 0, count: 64)), "number of members")
        refused(MembershipChange(group: group, author: alice.account, counter: 1, parents: [parent], action: .rename(" padded"),
                                 signature: [UInt8](repeating: 0, count: 64)), "name")
        refused(MembershipChange(group: group, author: alice.account, counter: 1, parents: [parent], action: .rename("a\u{202E}b"),
                                 signature: [UInt8](repeating: 0, count: 64)), "name")
        refused(MembershipChange(group: group, author: alice.account, counter: 1, parents: [parent], action: .timer(seconds: 7),
                                 signature: [UInt8](repeating: 0, count: 64)), "timer")
        refused(MembershipChange(group: group, author: alice.account, counter: 1, parents: [parent], action: .rekey(alice.code),
                                 signature: [UInt8](repeating: 0, count: 64)), "new account key (the author's own)")
        var role = MembershipChange(group: group, author: alice.account, counter: 1, parents: [parent], action: .role(member: bob.account, .admin),
                                    signature: [UInt8](repeating: 0, count: 64)).encoded
        role[role.count - 65] = 2
        XCTAssertThrowsError(try MembershipChange(decoding: role)) { XCTAssertEqual($0 as? MembershipChange.DecodeError, .badField("role")) }
    }

    func testAnyChangedByteIsUndecodableOrForgedAndAnotherId() throws {
        let (_, log) = create([bob])
        let change = MembershipChange.next(.add([carol.code]), in: log, by: alice.key).change
        let bytes = change.encoded
        for i in bytes.indices {
            var altered = bytes
            altered[i] ^= 0x01
            XCTAssertThrowsError(try MembershipChange.verified(decoding: altered), "byte \(i) changed")
        }
        // The same change signed again is the same bytes (Ed25519 is deterministic): its id too.
        XCTAssertEqual(MembershipChange.next(.add([carol.code]), in: log, by: alice.key).id, change.id)
        XCTAssertNotEqual(MembershipChange.next(.add([dave.code]), in: log, by: alice.key).id, change.id)
    }

    func testACodeHandedOnThatItsAccountDidNotSignIsForged() throws {
        let (_, log) = create([bob])
        var swapped = carol.code
        swapped.relay = RelayAddress(host: "evil.example", port: 7000, publicKey: [UInt8](repeating: 9, count: 32))
        let change = MembershipChange.next(.add([swapped]), in: log, by: alice.key)
        XCTAssertThrowsError(try MembershipChange.verified(decoding: change.change.encoded)) {
            XCTAssertEqual($0 as? MembershipRefusal, .forged(.contactCode))
        }
        // Signed by another key than its author's.
        var stolen = MembershipChange.next(.leave, in: log, by: bob.key).change
        stolen.signature = MembershipChange.next(.leave, in: log, by: carol.key).change.signature
        XCTAssertThrowsError(try stolen.verified()) { XCTAssertEqual($0 as? MembershipChange.Forgery, .signature) }
        // A contact code's signature is not a membership change's: the labels differ.
        var relabelled = MembershipChange(group: log.group, author: bob.account, counter: 1, parents: log.sortedHeads, action: .leave)
        relabelled.signature = bob.key.sign(ContactCode.signatureLabel + relabelled.signedFields)
        XCTAssertThrowsError(try relabelled.verified()) { XCTAssertEqual($0 as? MembershipChange.Forgery, .signature) }
    }

    // MARK: who may make which change

    func testTheCreatorIsTheFirstAdminAndTheOthersAreMembers() {
        let (create, log) = create([bob, carol])
        XCTAssertEqual(log.group, GroupID(create.id))
        XCTAssertEqual(log.roster.name, "Friends")
        XCTAssertEqual(names(log), ["Alice", "Bob", "Carol"])
        XCTAssertEqual(log.roster.members.map(\.role), [.admin, .member, .member])
        XCTAssertEqual(Set(log.roster.members.map(\.addedBy)), [alice.account])
        XCTAssertEqual(log.heads, [create.id])
        XCTAssertEqual(log.nextCounter, 1)
    }

    func testOnlyAdminsAddRemoveRenameAndChangeRoles() {
        let (_, start) = create([bob, carol])
        for action: MembershipChange.Action in [.add([dave.code]), .remove(member: carol.account), .rename("Bob's"), .role(member: carol.account, .admin)] {
            var log = start
            XCTAssertEqual(apply(action, by: bob, to: &log).1, .refused(.notPermitted(.notAnAdmin)), "\(action) by a member")
            XCTAssertEqual(log.roster, start.roster)
            XCTAssertEqual(log.changes.count, 1, "nothing stored")
            guard case .taken = apply(action, by: alice, to: &log).1 else { return XCTFail("\(action) by the admin") }
        }
        var log = start
        apply(.role(member: bob.account, .admin), by: alice, to: &log)
        guard case .taken = apply(.add([dave.code]), by: bob, to: &log).1 else { return XCTFail("an admin made by the creator adds") }
        XCTAssertEqual(names(log), ["Alice", "Bob", "Carol", "Dave"])
        XCTAssertEqual(log.roster.member(dave.account)?.addedBy, bob.account)
        apply(.rename("Climbing"), by: bob, to: &log)
        XCTAssertEqual(log.roster.name, "Climbing")
    }

    func testAnyoneLeavesAndSetsTheTimerAndANonMemberNothing() {
        var (_, log) = create([bob, carol])
        guard case .taken = apply(.timer(seconds: 300), by: carol, to: &log).1 else { return XCTFail("a member sets the timer") }
        XCTAssertEqual(log.roster.timerSeconds, 300)
        guard case .taken = apply(.leave, by: carol, to: &log).1 else { return XCTFail("a member leaves") }
        XCTAssertEqual(names(log), ["Alice", "Bob"])
        for action: MembershipChange.Action in [.leave, .timer(seconds: 30), .add([dave.code]), .rename("Mine")] {
            XCTAssertEqual(apply(action, by: carol, to: &log).1, .refused(.notPermitted(.notAMember)), "\(action) by one who left")
            XCTAssertEqual(apply(action, by: dave, to: &log).1, .refused(.notPermitted(.notAMember)), "\(action) by one never in it")
        }
    }

    func testTheLastAdminLeavingLeavesTheLongestStandingMemberAdmin() {
        var (_, log) = create([bob, carol])
        apply(.add([dave.code]), by: alice, to: &log)
        XCTAssertEqual(apply(.role(member: alice.account, .member), by: alice, to: &log).1, .refused(.notPermitted(.lastAdmin)))
        apply(.leave, by: alice, to: &log)
        XCTAssertEqual(names(log), ["Bob", "Carol", "Dave"])
        XCTAssertEqual(log.roster.members.map(\.role), [.admin, .member, .member])
        guard case .taken = apply(.remove(member: carol.account), by: bob, to: &log).1 else { return XCTFail("the new admin removes") }
        XCTAssertEqual(names(log), ["Bob", "Dave"])
    }

    func testTargetsMustBeMembersOrNotAsTheChangeSays() {
        var (_, log) = create([bob])
        XCTAssertEqual(apply(.add([bob.code]), by: alice, to: &log).1, .refused(.notPermitted(.alreadyAMember)))
        XCTAssertEqual(apply(.remove(member: carol.account), by: alice, to: &log).1, .refused(.notPermitted(.targetNotAMember)))
        XCTAssertEqual(apply(.role(member: carol.account, .admin), by: alice, to: &log).1, .refused(.notPermitted(.targetNotAMember)))
        XCTAssertEqual(apply(.remove(member: alice.account), by: alice, to: &log).1, .refused(.notPermitted(.removesItself)))
        apply(.remove(member: bob.account), by: alice, to: &log)
        guard case .taken = apply(.add([bob.code]), by: alice, to: &log).1 else { return XCTFail("one removed may be added again") }
        XCTAssertEqual(names(log), ["Alice", "Bob"])
    }

    func testAGroupHoldsAHundredMembersAndNoMore() {
        let people = (1..<GroupRoster.memberLimit).map { Person("P\($0)") }
        var (_, log) = create(Array(people.prefix(89)))
        XCTAssertEqual(apply(.add(people.suffix(10).map(\.code) + [dave.code]), by: alice, to: &log).1, .refused(.notPermitted(.overLimit)),
                       "all or nothing")
        guard case .taken = apply(.add(people.suffix(10).map(\.code)), by: alice, to: &log).1 else { return XCTFail("up to the limit") }
        XCTAssertEqual(log.roster.members.count, GroupRoster.memberLimit)
        XCTAssertEqual(apply(.add([dave.code]), by: alice, to: &log).1, .refused(.notPermitted(.overLimit)))
        XCTAssertNil(GroupRoster(creating: MembershipChange(group: nil, author: alice.account, counter: 0, parents: [],
                                                            action: .create(name: "Big", members: [alice.code] + people.map(\.code) + [dave.code]))))
    }

    // MARK: what the log takes

    func testAReplayAnotherGroupABadCounterAndASecondCreateAreRefused() {
        var (create, log) = create([bob])
        let (change, outcome) = apply(.rename("Once"), by: alice, to: &log)
        XCTAssertEqual(outcome, .taken([change.id]))
        XCTAssertEqual(log.receive(change), .replay)
        XCTAssertEqual(log.receive(create), .replay)
        XCTAssertEqual(log.changes.count, 2)

        var (_, other) = self.create([bob], by: bob, name: "Other")
        XCTAssertNotEqual(other.group, log.group)
        XCTAssertEqual(log.receive(MembershipChange.next(.leave, in: other, by: bob.key)), .refused(.otherGroup))
        XCTAssertEqual(log.receive(MembershipChange.signed(.create(name: "Friends", members: [bob.code, alice.code]), group: nil, counter: 0, parents: [],
                                                           by: bob.key)), .refused(.notPermitted(.secondCreate)))
        for counter: UInt64 in [1, 3, UInt64.max] {
            XCTAssertEqual(log.receive(MembershipChange.signed(.leave, group: log.group, counter: counter, parents: log.sortedHeads, by: bob.key)),
                           .refused(.counter), "counter \(counter) after 1")
        }
        XCTAssertEqual(other.receive(change), .refused(.otherGroup))
        XCTAssertEqual(log.roster.name, "Once")
    }

    func testAChangeWaitsForItsParentsAndIsTakenWithThem() {
        let (create, start) = create([bob, carol])
        var ahead = start
        let (first, _) = apply(.add([dave.code]), by: alice, to: &ahead)
        let (second, _) = apply(.role(member: dave.account, .admin), by: alice, to: &ahead)
        let (third, _) = apply(.rename("Dave's"), by: dave, to: &ahead)
        var behind = start
        XCTAssertEqual(behind.receive(third), .waiting)
        XCTAssertEqual(behind.receive(third), .replay, "waiting already")
        XCTAssertEqual(behind.receive(second), .waiting)
        XCTAssertEqual(behind.roster, start.roster, "nothing applied while waiting")
        XCTAssertEqual(behind.receive(first), .taken([first.id, second.id, third.id]))
        XCTAssertEqual(behind.roster, ahead.roster)
        XCTAssertEqual(behind.heads, [third.id])
        XCTAssertTrue(behind.waiting.isEmpty)

        // A change after one that can never be taken is not taken either.
        var log = start
        let forged = MembershipChange.signed(.add([dave.code]), group: log.group, counter: 1, parents: [create.id], by: bob.key)
        let after = MembershipChange.signed(.leave, group: log.group, counter: 2, parents: [forged.id], by: dave.key)
        XCTAssertEqual(log.receive(after), .waiting)
        XCTAssertEqual(log.receive(forged), .refused(.notPermitted(.notAnAdmin)))
        XCTAssertEqual(log.changes.count, 1)
    }

    func testWhatWaitsIsBounded() {
        var (create, log) = create([bob])
        let unknown = ChangeID([UInt8](repeating: 0xee, count: 32))!
        for i in 0..<GroupLog.maxWaiting {
            XCTAssertEqual(log.receive(MembershipChange.signed(.rename("W\(i)"), group: log.group, counter: 2, parents: [create.id, unknown],
                                                               by: bob.key)), .waiting)
        }
        XCTAssertEqual(log.receive(MembershipChange.signed(.leave, group: log.group, counter: 2, parents: [unknown], by: bob.key)), .refused(.tooManyWaiting))
        guard case .taken = log.receive(MembershipChange.next(.rename("Still"), in: log, by: alice.key)) else { return XCTFail("a complete change is still taken") }
    }

    // MARK: concurrent changes

    func testTwoAdminsApartConvergeByCounterThenId() {
        var (_, start) = create([bob, carol])
        apply(.role(member: bob.account, .admin), by: alice, to: &start)
        var a = start, b = start
        // Apart: Alice removes Bob while Bob adds Dave; both at the same counter.
        let (removal, _) = apply(.remove(member: bob.account), by: alice, to: &a)
        let (addition, _) = apply(.add([dave.code]), by: bob, to: &b)
        XCTAssertEqual(removal.change.counter, addition.change.counter)
        guard case .taken = a.receive(addition), case .taken = b.receive(removal) else { return XCTFail("each takes the other's") }
        XCTAssertEqual(a.roster, b.roster)
        XCTAssertEqual(a.order, b.order)
        XCTAssertEqual(a.heads, [removal.id, addition.id])
        if removal.id < addition.id {
            XCTAssertEqual(names(a), ["Alice", "Carol"], "the removal first: Bob's add changes nothing")
            XCTAssertEqual(a.ineffective, [addition.id: .notAMember])
        } else {
            XCTAssertEqual(names(a), ["Alice", "Carol", "Dave"], "the add first, then Bob removed")
            XCTAssertTrue(a.ineffective.isEmpty)
        }
        // The next change names both heads and comes after both.
        let (merge, _) = apply(.rename("Together"), by: alice, to: &a)
        XCTAssertEqual(merge.change.parents, [removal.id, addition.id].sorted())
        XCTAssertEqual(b.receive(merge), .taken([merge.id]))
        XCTAssertEqual(a.roster, b.roster)
    }

    /// Who a change never went to: the members whose add its author had not seen. Bob leaves
    /// while Alice adds Dave back: Bob's leave went to those Bob saw, so Dave (whom Alice
    /// added, unseen by the leave) is the one to hand it on to — and no one else is.
    func testAChangeNamesTheMembersItsAuthorDidNotSeeJoin() {
        var (_, start) = create([bob, carol])
        var a = start, b = start
        let (leave, _) = apply(.leave, by: bob, to: &b)
        let (addition, _) = apply(.add([dave.code]), by: alice, to: &a)
        guard case .taken = a.receive(leave) else { return XCTFail("Alice takes Bob's leave") }
        XCTAssertEqual(a.membersUnseen(by: leave.id), [dave.account], "Bob had not seen Dave join")
        XCTAssertEqual(a.membersUnseen(by: addition.id), [], "Alice's own add: every current member saw the create")
        // A change made after the add saw it: no one is missing it.
        let (rename, _) = apply(.rename("Later"), by: carol, to: &a)
        XCTAssertEqual(a.membersUnseen(by: rename.id), [])
        XCTAssertEqual(start.membersUnseen(by: ChangeID([UInt8](repeating: 9, count: 32))!), [], "a change not held")
    }

    /// Members apart make random changes on what each holds, meet in random pairs handing
    /// over what they hold in random order, then all meet: every one holds the same roster,
    /// heads and order.
    func testMembersWhoHoldTheSameChangesHoldTheSameRoster() {
        let everyone = [alice, bob, carol, dave] + (0..<4).map { Person("M\($0)") }
        var ineffective = 0, merges = 0, rekeys = 0
        for seed in 1...40 {
            var random = SplitMix64(seed: UInt64(seed))
            // Each signs with the key their own log knows them by now (a rekey moves it on).
            var people = everyone, rotations = Array(repeating: 0, count: everyone.count)
            let (_, start) = create(Array(people[1..<4]))
            var logs = Array(repeating: start, count: people.count)
            var made: [VerifiedChange] = []
            for _ in 0..<30 {
                let who = Int.random(in: 0..<people.count, using: &random)
                let roster = logs[who].roster
                guard roster.isMember(people[who].account) else { continue }
                let others = people.filter { $0.account != people[who].account }
                let target = others.randomElement(using: &random)!
                let actions: [MembershipChange.Action] = [
                    .add([target.code]), .remove(member: target.account), .leave, .rename("R\(Int.random(in: 0..<9, using: &random))"),
                    .role(member: target.account, Bool.random(using: &random) ? .admin : .member), .timer(seconds: DisappearingTimer.allCases.randomElement(using: &random)!.rawValue),
                    .rekey(Person(everyone[who].code.name, rotated: rotations[who] + 1).code),
                ]
                let action = actions.randomElement(using: &random)!
                let change = MembershipChange.next(action, in: logs[who], by: people[who].key)
                if case .taken = logs[who].receive(change) {
                    made.append(change)
                    if case .rekey = action, logs[who].ineffective[change.id] == nil {
                        rotations[who] += 1
                        people[who] = Person(everyone[who].code.name, rotated: rotations[who])
                        rekeys += 1
                    }
                }
                if Int.random(in: 0..<3, using: &random) == 0 {
                    let (x, y) = (Int.random(in: 0..<people.count, using: &random), Int.random(in: 0..<people.count, using: &random))
                    for change in logs[x].changes.map({ VerifiedChange(id: $0.key, change: $0.value) }).shuffled(using: &random) { _ = logs[y].receive(change) }
                }
            }
            for i in logs.indices {
                for change in made.shuffled(using: &random) { _ = logs[i].receive(change) }
            }
            for log in logs.dropFirst() {
                XCTAssertEqual(log.roster, logs[0].roster, "seed \(seed)")
                XCTAssertEqual(log.heads, logs[0].heads, "seed \(seed)")
                XCTAssertEqual(log.order, logs[0].order, "seed \(seed)")
                XCTAssertTrue(log.waiting.isEmpty, "seed \(seed)")
            }
            XCTAssertEqual(logs[0].changes.count, made.count + 1, "seed \(seed): every change one of them took, every member took")
            // As a store keeps it and reads it back: the same log, folded once.
            let create = logs[0].changes.first { $0.value.group == nil }.map { VerifiedChange(id: $0.key, change: $0.value) }!
            let restored = try! GroupLog(restoring: create, taken: logs[0].changes.map { VerifiedChange(id: $0.key, change: $0.value) }, waiting: [])
            XCTAssertEqual(restored.roster, logs[0].roster, "seed \(seed)")
            XCTAssertEqual(restored.heads, logs[0].heads, "seed \(seed)")
            XCTAssertEqual(restored.order, logs[0].order, "seed \(seed)")
            XCTAssertEqual(restored.ineffective, logs[0].ineffective, "seed \(seed)")
            ineffective += logs[0].ineffective.count
            merges += logs[0].changes.values.count { $0.parents.count > 1 }
        }
        XCTAssertGreaterThan(ineffective, 0, "concurrent changes left some without effect: the order decided")
        XCTAssertGreaterThan(merges, 0, "branches merged")
        XCTAssertGreaterThan(rekeys, 10, "members rotated their keys along the way")
    }
    // MARK: a member who rotates their keys

    /// Bob rotates (`keys rotate`): his rekey, signed with the key the roster knows, names his
    /// new one. He keeps his place and role, is found by either key, signs with the new one
    /// only; a rekey for another device, to someone else's key, or by a non-member is refused.
    func testARekeyMovesAMemberToTheirNewKeyAndOnlyThat() {
        var (_, log) = create([bob, carol])
        let bob1 = Person("Bob", rotated: 1)
        guard case .taken = apply(.role(member: bob.account, .admin), by: alice, to: &log).1 else { return XCTFail("Bob an admin") }
        XCTAssertEqual(apply(.rekey(Person("Bob", rotated: 1, device: "Mallory").code), by: bob, to: &log).1, .refused(.notPermitted(.otherDevice)))
        let carolsKeyBobsDevice = ContactCode.signed(name: "Bob", account: carol.key, device: bob.code.deviceKey, relay: bob.code.relay,
                                                     inviteToken: bob.code.inviteToken)
        XCTAssertEqual(apply(.rekey(carolsKeyBobsDevice), by: bob, to: &log).1, .refused(.notPermitted(.alreadyAMember)), "someone else's key")
        XCTAssertEqual(apply(.rekey(Person("Dave", rotated: 1).code), by: dave, to: &log).1, .refused(.notPermitted(.notAMember)))
        guard case .taken = apply(.rekey(bob1.code), by: bob, to: &log).1, log.ineffective.isEmpty else { return XCTFail("Bob's rekey") }
        XCTAssertEqual(names(log), ["Alice", "Bob", "Carol"], "his place kept")
        let member = log.roster.member(bob.account)
        XCTAssertEqual(member?.accountKey, bob1.account)
        XCTAssertEqual(member?.formerKeys, [bob.account])
        XCTAssertEqual(member?.joinedAs, bob.account)
        XCTAssertEqual(member?.role, .admin)
        XCTAssertTrue(log.roster.isMember(bob1.account) && log.roster.isMember(bob.account))
        XCTAssertNil(log.roster.author(bob.account), "the old key signs nothing now")
        XCTAssertEqual(apply(.rename("Stolen"), by: bob, to: &log).1, .refused(.notPermitted(.notAMember)), "a copy of the old key makes nothing")
        guard case .taken = apply(.rename("Climbing"), by: bob1, to: &log).1, log.ineffective.isEmpty else { return XCTFail("his new key's change") }
        XCTAssertEqual(log.roster.name, "Climbing")
        // Twice: both old keys are his.
        let bob2 = Person("Bob", rotated: 2)
        guard case .taken = apply(.rekey(bob2.code), by: bob1, to: &log).1 else { return XCTFail("a second rekey") }
        XCTAssertEqual(log.roster.member(bob.account)?.formerKeys, [bob.account, bob1.account])
        XCTAssertEqual(apply(.rekey(Person("Bob", rotated: 3).code), by: bob1, to: &log).1, .refused(.notPermitted(.notAMember)))
        guard case .taken = apply(.leave, by: bob2, to: &log).1, log.ineffective.isEmpty else { return XCTFail("he leaves with his newest key") }
        XCTAssertFalse(log.roster.isMember(bob.account) || log.roster.isMember(bob2.account))
    }

    /// An admin who had not seen Bob's rekey removes him, or changes his role, by his old key;
    /// Alice adds Dave, unseen by the rekey: whichever order the changes fold in, they reach
    /// Bob as he is, and the rekey is one to hand on to Dave.
    func testChangesMadeBeforeARekeyWasSeenStillNameTheMember() {
        let (_, start) = create([bob, carol])
        let bob1 = Person("Bob", rotated: 1)
        for action: MembershipChange.Action in [.remove(member: bob.account), .role(member: bob.account, .admin)] {
            var a = start, b = start
            let (rekey, _) = apply(.rekey(bob1.code), by: bob, to: &b)
            let (change, _) = apply(action, by: alice, to: &a)
            guard case .taken = a.receive(rekey), case .taken = b.receive(change) else { return XCTFail("both take both") }
            XCTAssertEqual(a.roster, b.roster)
            XCTAssertNil(a.ineffective[change.id], "\(action) reached Bob whichever came first")
            if case .remove = action {
                XCTAssertFalse(a.roster.isMember(bob1.account) || a.roster.isMember(bob.account))
            } else {
                XCTAssertTrue(a.ineffective.isEmpty)
                XCTAssertEqual(a.roster.member(bob1.account)?.role, .admin)
            }
        }
        var a = start, b = start
        let (rekey, _) = apply(.rekey(bob1.code), by: bob, to: &b)
        let (addition, _) = apply(.add([dave.code]), by: alice, to: &a)
        guard case .taken = a.receive(rekey) else { return XCTFail("Alice takes the rekey") }
        XCTAssertEqual(a.membersUnseen(by: rekey.id), [dave.account], "Bob had not seen Dave join")
        // Dave rotates next: a change made without seeing him join names him by his key now.
        var c = start
        let dave1 = Person("Dave", rotated: 1)
        guard case .taken = apply(.rekey(dave1.code), by: dave, to: &a).1 else { return XCTFail("Dave's rekey") }
        let (timer, _) = apply(.timer(seconds: 3600), by: carol, to: &c)
        guard case .taken = a.receive(timer) else { return XCTFail("Alice takes Carol's timer") }
        XCTAssertEqual(a.membersUnseen(by: timer.id), [dave1.account])
        XCTAssertEqual(a.membersUnseen(by: addition.id), [])
    }

    // MARK: comparing logs by their heads

    /// Alice holds Bob's leave and her rename after it; Carol holds only the create. Carol's
    /// heads tell Alice what to hand her (both, parent first); Alice's tell Carol which she
    /// lacks; a member who holds everything is handed nothing.
    func testHeadsSayWhatAMemberLacksAndWhatToHandThem() {
        let (create, start) = create([bob, carol])
        var a = start
        let (leave, _) = apply(.leave, by: bob, to: &a)
        let (rename, _) = apply(.rename("Later"), by: alice, to: &a)
        let carolHeads = start.sortedHeads
        XCTAssertEqual(a.missing(from: carolHeads), [leave.id, rename.id])
        XCTAssertEqual(start.unknown(a.sortedHeads), [rename.id])
        XCTAssertEqual(a.unknown(carolHeads), [])
        XCTAssertEqual(a.missing(from: a.sortedHeads), [], "the same heads: nothing to hand on")
        XCTAssertEqual(start.missing(from: a.sortedHeads), [create.id],
                       "their log is ahead, through a head not known here: nothing below it counts as theirs")
        // Heads this log does not know count for nothing: the whole log is handed.
        let stranger = ChangeID([UInt8](repeating: 7, count: 32))!
        XCTAssertEqual(a.missing(from: [stranger]), [create.id, leave.id, rename.id])
        XCTAssertEqual(a.missing(from: [stranger, leave.id]), [rename.id])
        var c = start
        for id in a.missing(from: carolHeads) { _ = c.receive(VerifiedChange(id: id, change: a.changes[id]!)) }
        XCTAssertEqual(c.roster, a.roster)
        XCTAssertEqual(c.heads, a.heads)
    }

    /// Whether a log took someone out by a change a writer at given heads had not seen: their
    /// removal or their leave, only when it changed the roster.
    func testALogSaysWhetherItTookSomeoneOutUnseenAtHeads() {
        let (_, start) = create([bob, carol])
        var a = start
        let bobHeads = start.sortedHeads
        apply(.remove(member: bob.account), by: alice, to: &a)
        XCTAssertTrue(a.tookOut(bob.account, unseenAt: bobHeads), "removed as he wrote")
        XCTAssertFalse(a.tookOut(bob.account, unseenAt: a.sortedHeads), "he wrote after seeing his removal")
        XCTAssertFalse(a.tookOut(carol.account, unseenAt: bobHeads))
        let carolHeads = a.sortedHeads
        apply(.leave, by: carol, to: &a)
        XCTAssertTrue(a.tookOut(carol.account, unseenAt: carolHeads), "she left: what she wrote before may come after")
        XCTAssertFalse(a.tookOut(alice.account, unseenAt: bobHeads))
        // A removal another change made ineffective (he had left already) took no one out.
        var b = start
        apply(.leave, by: bob, to: &b)
        let leftAt = b.sortedHeads
        var c = start
        let (removal, _) = apply(.remove(member: bob.account), by: alice, to: &c)
        _ = b.receive(removal)
        XCTAssertEqual(b.roster.isMember(bob.account), false)
        XCTAssertEqual(b.tookOut(bob.account, unseenAt: leftAt), b.ineffective[removal.id] == nil,
                       "only the change that took effect counts")
    }

    /// Members apart make random changes; then, pair by random pair, one tells the other its
    /// heads and is handed only what `missing` says, in that order. Once every pair has met
    /// both ways, every member holds the same log; nothing handed on came before its parents,
    /// and where every head of the receiver's was known, nothing was one they held already.
    func testHandingOnWhatHeadsLackConvergesWithoutReplays() {
        let people = [alice, bob, carol, dave]
        for seed in 1...40 {
            var random = SplitMix64(seed: UInt64(seed) &* 7919)
            let (_, start) = create(Array(people[1...]))
            var logs = Array(repeating: start, count: people.count)
            for _ in 0..<20 {
                let who = Int.random(in: 0..<people.count, using: &random)
                guard logs[who].roster.isMember(people[who].account) else { continue }
                let target = people.filter { $0.account != people[who].account }.randomElement(using: &random)!
                let actions: [MembershipChange.Action] = [.add([target.code]), .remove(member: target.account), .leave,
                                                          .rename("R\(Int.random(in: 0..<9, using: &random))"), .timer(seconds: 3600)]
                _ = logs[who].receive(MembershipChange.next(actions.randomElement(using: &random)!, in: logs[who], by: people[who].key))
            }
            func meet(_ from: Int, _ to: Int) {
                let theirs = logs[to].sortedHeads, exact = logs[from].unknown(theirs).isEmpty
                for id in logs[from].missing(from: theirs) {
                    let outcome = logs[to].receive(VerifiedChange(id: id, change: logs[from].changes[id]!))
                    if exact { XCTAssertNotEqual(outcome, .replay, "seed \(seed): every head of theirs known, yet handed a change they held") }
                    XCTAssertNotEqual(outcome, .waiting, "seed \(seed): handed a change before its parents")
                }
            }
            for _ in 0..<12 { meet(Int.random(in: 0..<people.count, using: &random), Int.random(in: 0..<people.count, using: &random)) }
            for x in people.indices { for y in people.indices where x != y { meet(x, y) } }
            for y in people.indices { for x in people.indices where x != y { meet(x, y) } }
            for log in logs.dropFirst() {
                XCTAssertEqual(log.heads, logs[0].heads, "seed \(seed)")
                XCTAssertEqual(log.roster, logs[0].roster, "seed \(seed)")
                XCTAssertTrue(log.unknown(logs[0].sortedHeads).isEmpty, "seed \(seed)")
            }
        }
    }
}
