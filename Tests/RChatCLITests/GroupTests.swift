import Foundation
import RChatCore
import RChatCrypto
import RChatSQL
import XCTest

/// Groups end to end (issue 30): three accounts on one real relay, each with its own real
/// `rchat sync`. Alice knows Bob and Carol; they do not know each other. Alice makes a group:
/// each member learns the roster from the signed log, the members who are strangers meet
/// through the codes Alice handed on ("added by Alice"), and a message to the group is
/// Delivered only once every member stored it.
final class GroupTests: RecoveryTestCase {
    func members(_ person: String, _ group: String) throws -> [[String: String]] {
        let run = try world.box.rchat(person, ["group", "members", group, "--json"])
        try world.expectSuccess(run)
        return try run.lines.map { line in try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String], line) }
    }

    /// `list GROUP --json`, each outgoing message's status and each of its deliveries'
    /// recorded for the status-history checks.
    func groupList(_ person: String, _ group: String) throws -> [[String: Any]] {
        let run = try world.box.rchat(person, ["list", group, "--json"])
        try world.expectSuccess(run)
        let objects = try run.lines.map { line in try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line) }
        for m in objects where m["direction"] as? String == "out" {
            guard let id = m["id"] as? String else { continue }
            if let status = m["status"] as? String { world.record(person, id, status) }
            for d in (m["deliveries"] as? [[String: String]]) ?? [] {
                if let member = d["member"], let status = d["status"] { world.record(person, "\(id) to \(member)", status) }
            }
        }
        return objects
    }

    /// Alice, Bob and Carol, each syncing; Alice knows the other two, who do not know each
    /// other; Alice made the group Friends of `members`, and each of them holds it.
    /// `beforeTheGroup`: what happens once everyone knows Alice, before she makes the group.
    func friends(_ members: [String], beforeTheGroup: () throws -> Void = {}) throws {
        for person in ["alice", "bob", "carol"] { try world.makeAccount(person) }
        for other in ["bob", "carol"] {
            try world.add("alice", other)
            try world.add(other, "alice")
        }
        try beforeTheGroup()
        try world.expectSuccess(try world.box.rchat("alice", ["group", "create", "Friends"] + members))
        for person in ["alice", "bob", "carol"] { try world.startSync(person) }
        try world.eventually("\(members) hold the group", timeout: 20) {
            members.allSatisfy { (try? self.world.box.rchat($0.lowercased(), ["group", "members", "Friends"]).status) == 0 }
        }
    }

    func testAGroupReachesEveryMemberAndAMessageIsDeliveredOnlyOnceAllStoredIt() throws {
        for person in ["alice", "bob", "carol"] { try world.makeAccount(person) }
        for other in ["bob", "carol"] {
            try world.add("alice", other)
            try world.add(other, "alice")
        }
        let created = try world.box.rchat("alice", ["group", "create", "Friends", "Bob", "Carol"])
        try world.expectSuccess(created)
        XCTAssertEqual(created.lines, ["created Friends with 3 members, you included"])
        XCTAssertEqual(try members("alice", "Friends"), [
            ["name": "Alice", "role": "admin", "state": "current", "verified": "in person"],
            ["name": "Bob", "role": "member", "state": "current", "verified": "in person"],
            ["name": "Carol", "role": "member", "state": "current", "verified": "in person"],
        ])
        for person in ["alice", "bob", "carol"] { try world.startSync(person) }

        // Each member holds the group, the roster its log folds to, and who vouches for whom.
        try world.eventually("Bob and Carol hold the group", timeout: 20) {
            ["bob", "carol"].allSatisfy { (try? self.world.box.rchat($0, ["group", "members", "Friends"]).status) == 0 }
        }
        XCTAssertEqual(try members("bob", "Friends"), [
            ["name": "Bob", "role": "member", "state": "current", "verified": "in person"],
            ["name": "Alice", "role": "admin", "state": "current", "verified": "in person"],
            ["name": "Carol", "role": "member", "state": "current", "verified": "by Alice"],
        ])
        XCTAssertEqual(try members("carol", "Friends").last, ["name": "Bob", "role": "member", "state": "current", "verified": "by Alice"])
        XCTAssertEqual(try world.contacts("bob").map(\.name), ["Alice"], "a member met through a group is not a contact")
        let shown = try groupList("bob", "Friends")
        XCTAssertEqual(shown.count, 1)
        XCTAssertEqual(shown.first?["from"] as? String, "Alice")
        XCTAssertEqual(shown.first?["text"] as? String, "Alice created the group \u{201C}Friends\u{201D} with Bob and Carol.")

        // A message: a delivery per member, each proved by that member's own receipt.
        let id = try world.send("alice", to: "Friends", "hello all")
        try world.eventually("every member stored it", timeout: 30) {
            let message = try self.groupList("alice", "Friends").first { $0["id"] as? String == id }
            return message?["status"] as? String == "Delivered"
        }
        let message = try XCTUnwrap(try groupList("alice", "Friends").first { $0["id"] as? String == id })
        let deliveries = try XCTUnwrap(message["deliveries"] as? [[String: String]])
        XCTAssertEqual(deliveries.map { $0["member"] }, ["Bob", "Carol"])
        XCTAssertEqual(Set(deliveries.map { $0["status"] }), ["Delivered"])
        for person in ["bob", "carol"] {
            let got = try groupList(person, "Friends").filter { $0["id"] as? String == id }
            XCTAssertEqual(got.count, 1, "\(person) shows it once")
            XCTAssertEqual(got.first?["from"] as? String, "Alice")
            XCTAssertEqual(got.first?["text"] as? String, "hello all")
        }

        // Read per member: the message shows Read once both read it.
        try world.expectSuccess(try world.box.rchat("bob", ["read", "Friends"]))
        try world.eventually("Bob's Read reached Alice", timeout: 20) {
            let m = try self.groupList("alice", "Friends").first { $0["id"] as? String == id }
            return (m?["deliveries"] as? [[String: String]])?.first?["status"] == "Read"
        }
        XCTAssertEqual(try groupList("alice", "Friends").first { $0["id"] as? String == id }?["status"] as? String, "Delivered",
                       "Read only when every member read it")
        try world.expectSuccess(try world.box.rchat("carol", ["read", "Friends"]))
        try world.eventually("the message is Read", timeout: 20) {
            try self.groupList("alice", "Friends").first { $0["id"] as? String == id }?["status"] as? String == "Read"
        }

        // Bob writes: Carol, whom he knows only through Alice's group, gets it over the
        // channel the two opened from the codes Alice handed on.
        let fromBob = try world.send("bob", to: "Friends", "hi from bob")
        try world.eventually("Alice and Carol stored Bob's message", timeout: 40) {
            try self.groupList("bob", "Friends").first { $0["id"] as? String == fromBob }?["status"] as? String == "Delivered"
        }
        XCTAssertEqual(try groupList("carol", "Friends").filter { $0["id"] as? String == fromBob }.map { $0["from"] as? String }, ["Bob"])

        // Search in the group, and over every conversation: who wrote what.
        let found = try world.box.rchat("carol", ["search", "Friends", "hi", "--json"])
        try world.expectSuccess(found)
        let hits = try found.lines.map { try XCTUnwrap(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        XCTAssertEqual(hits.map { $0["from"] as? String }, ["Bob"], "\(found.lines)")
        XCTAssertEqual(hits.first?["conversation"] as? String, "Friends")
        let everywhere = try world.box.rchat("carol", ["search", "--all", "hello"])
        try world.expectSuccess(everywhere)
        XCTAssertTrue(everywhere.lines.first?.contains("Friends") == true && everywhere.lines.first?.contains("Alice: hello all") == true,
                      "\(everywhere.lines)")

        // A member away: the message shows what was proved, never more.
        world.stopSync("carol")
        let second = try world.send("alice", to: "Friends", "carol is away")
        try world.eventually("Bob stored it", timeout: 30) {
            let m = try self.groupList("alice", "Friends").first { $0["id"] as? String == second }
            return (m?["deliveries"] as? [[String: String]])?.first?["status"] == "Delivered"
        }
        let waiting = try XCTUnwrap(try groupList("alice", "Friends").first { $0["id"] as? String == second })
        XCTAssertEqual(waiting["status"] as? String, "Sent", "Delivered only when every member stored it")
        try world.startSync("carol")
        try world.eventually("Carol stored it once back", timeout: 30) {
            let m = try self.groupList("alice", "Friends").first { $0["id"] as? String == second }
            return m?["status"] as? String == "Delivered"
        }
        world.assertStatusesNeverLowered()
    }

    /// Alice adds Carol, removes Bob, renames the group, Carol leaves: every member's roster
    /// follows the log; the removed member gets nothing written after, and cannot write.
    func testAddRemoveRenameAndLeaveReachEveryMemberAndTheRemovedOneGetsNothingAfter() throws {
        try friends(["Bob"])
        XCTAssertFailsCleanly(try world.box.rchat("bob", ["group", "add", "Friends", "Alice"]), status: 2, mentions: "only an admin")

        try world.expectSuccess(try world.box.rchat("alice", ["group", "add", "Friends", "Carol"]))
        try world.eventually("Carol holds the group with its history", timeout: 20) {
            (try? self.members("carol", "Friends").map { $0["name"]! }) == ["Carol", "Alice", "Bob"]
        }
        XCTAssertEqual(try members("carol", "Friends")[2]["verified"], "by Alice", "the members before her, from Alice's codes")
        try world.eventually("Bob sees Carol join", timeout: 20) {
            (try? self.members("bob", "Friends").map { $0["name"]! }) == ["Bob", "Alice", "Carol"]
        }
        XCTAssertEqual(try groupList("bob", "Friends").last?["text"] as? String, "Alice added Carol.")

        try world.expectSuccess(try world.box.rchat("alice", ["group", "remove", "Friends", "Bob"]))
        try world.eventually("Bob knows he was removed", timeout: 20) {
            (try? self.members("bob", "Friends").first?["state"]) == "removed"
        }
        let after = try world.send("alice", to: "Friends", "after Bob left")
        try world.eventually("Carol stored it", timeout: 30) {
            try self.groupList("alice", "Friends").first { $0["id"] as? String == after }?["status"] as? String == "Delivered"
        }
        let deliveries = try XCTUnwrap(try groupList("alice", "Friends").first { $0["id"] as? String == after }?["deliveries"] as? [[String: String]])
        XCTAssertEqual(deliveries.map { $0["member"] }, ["Carol"], "nothing written after the removal goes to Bob")
        XCTAssertFalse(try groupList("bob", "Friends").contains { $0["id"] as? String == after })
        XCTAssertFailsCleanly(try world.box.rchat("bob", ["send", "Friends", "still here?"]), status: 2, mentions: "no longer in Friends")

        try world.expectSuccess(try world.box.rchat("alice", ["group", "rename", "Friends", "Climbing"]))
        try world.eventually("Carol sees the new name", timeout: 20) { (try? self.world.box.rchat("carol", ["group", "members", "Climbing"]).status) == 0 }
        // A timer is a change of the log: every member ends on it, messages written then go with it.
        let timer = try world.box.rchat("carol", ["timer", "Climbing", "1h"])
        try world.expectSuccess(timer)
        XCTAssertEqual(timer.lines.first, "disappearing messages set to 1 hour for Climbing")
        try world.eventually("Alice shows Carol's timer", timeout: 20) {
            try self.groupList("alice", "Climbing").contains { $0["text"] as? String == "Carol set disappearing messages to 1 hour." }
        }
        let timed = try world.send("alice", to: "Climbing", "gone in an hour")
        try world.eventually("Carol stored the timed message", timeout: 30) {
            try self.groupList("carol", "Climbing").contains { $0["id"] as? String == timed }
        }
        try world.eventually("its clock started at Alice (the relay took it)", timeout: 20) {
            try self.groupList("alice", "Climbing").first { $0["id"] as? String == timed }?["expires_at"] as? Int != nil
        }
        try world.expectSuccess(try world.box.rchat("carol", ["group", "leave", "Climbing"]))
        try world.eventually("Alice sees Carol leave", timeout: 20) {
            (try? self.members("alice", "Climbing").last?["state"]) == "left"
        }
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["send", "Climbing", "anyone?"]), status: 2, mentions: "no other member")
        world.assertStatusesNeverLowered()
    }

    /// A member whose rChat was changed to send a rename signed by someone not in the group
    /// (its plaintext rewritten before its engine seals it): every member refuses it, stores
    /// nothing, and the group keeps its name.
    func testAChangeSignedBySomeoneNotInTheGroupIsRefusedByEveryMember() throws {
        try friends(["Bob", "Carol"])
        world.stopSync("bob")
        let forgedID = try world.send("bob", to: "Friends", "to be rewritten")
        let db = try Database(path: world.box.path("bob-home") + "/rchat.db", fileMode: 0o600)
        let group = try XCTUnwrap(try db.queryOne("SELECT group_id FROM groups")?.blob("group_id"))
        let heads = try db.query("SELECT change_id FROM group_changes").map { ChangeID(try $0.blob("change_id"))! }
        let mallory = SigningKey.generate()
        let forged = MembershipChange.signed(.rename("Pwned"), group: GroupID(group), counter: 1, parents: heads, by: mallory)
        let guardTrigger = try XCTUnwrap(try db.queryOne("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND sql LIKE '%content never changes%'"))
        try db.execute("DROP TRIGGER \(try guardTrigger.string("name"))")
        try db.execute("UPDATE messages SET content = ? WHERE id = ?",
                       [.blob(MessageContent.control(.groupChanges([forged.change.encoded])).encoded()), .blob(try XCTUnwrap(MessageID(hex: forgedID)).bytes)])
        try db.execute(try guardTrigger.string("sql"))
        db.close()
        try world.startSync("bob")
        try world.eventually("the forged change reached Alice and Carol", timeout: 30) {
            ["alice", "carol"].allSatisfy { self.world.syncLog($0).contains("its author is not a member") }
        }
        for person in ["alice", "carol"] {
            XCTAssertEqual(try world.box.rchat(person, ["group", "members", "Friends"]).status, 0, "\(person) keeps the name")
            XCTAssertFalse(try groupList(person, "Friends").contains { $0["id"] as? String == forgedID }, "nothing stored at \(person)")
        }
        XCTAssertEqual(try world.box.rchat("alice", ["group", "members", "Pwned"]).status, 2)
    }

    /// A member Alice removed whose rChat was changed to write to the group anyway (its store
    /// rewritten to think it is still in): Alice and Carol drop what it sends, show nothing,
    /// and its sender never sees it Delivered.
    func testAMessageFromSomeoneNoLongerInTheRosterIsDroppedByEveryMember() throws {
        try friends(["Bob", "Carol"])
        try world.expectSuccess(try world.box.rchat("alice", ["group", "remove", "Friends", "Bob"]))
        try world.eventually("Bob knows he was removed", timeout: 20) { (try? self.members("bob", "Friends").first?["state"]) == "removed" }
        try world.eventually("Carol knows Bob was removed", timeout: 20) {
            (try? self.members("carol", "Friends").first { $0["name"] == "Bob" }?["state"]) == "removed"
        }
        world.stopSync("bob")
        let db = try Database(path: world.box.path("bob-home") + "/rchat.db", fileMode: 0o600)
        try db.execute("UPDATE groups SET state = 'current'")
        try db.execute("UPDATE conversation_members SET state = 'current' WHERE conversation_id < 0")
        db.close()
        let sneaked = try world.send("bob", to: "Friends", "I am still here")
        try world.startSync("bob")
        try world.eventually("Alice and Carol dropped it", timeout: 30) {
            ["alice", "carol"].allSatisfy { self.world.syncLog($0).contains("dropped: they are not in the group") }
        }
        for person in ["alice", "carol"] {
            XCTAssertFalse(try groupList(person, "Friends").contains { $0["id"] as? String == sneaked }, "nothing shown at \(person)")
        }
        XCTAssertNotEqual(try groupList("bob", "Friends").first { $0["id"] as? String == sneaked }?["status"] as? String, "Delivered")
    }

    func testAGroupOfSomeoneWhoIsNotAContactOrWithoutTheirCodeIsRefusedInOneLine() throws {
        try world.makeAccount("alice")
        let run = try world.box.rchat("alice", ["group", "create", "Friends", "Nobody"])
        XCTAssertFailsCleanly(run, status: 2, mentions: "no contact named Nobody")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["group", "members", "Friends"]), status: 2, mentions: "no group named Friends")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["group", "create", " bad", "Nobody"]), status: 2, mentions: "name must be")
    }
}
