import Foundation
import XCTest

/// Groups end to end (issue 30): three accounts on one real relay, each with its own real
/// `rchat sync`. Alice knows Bob and Carol; they do not know each other. Alice makes a group:
/// each member learns the roster from the signed log, the members who are strangers meet
/// through the codes Alice handed on ("added by Alice"), and a message to the group is
/// Delivered only once every member stored it.
final class GroupTests: EngineTestCase {
    private func members(_ person: String, _ group: String) throws -> [[String: String]] {
        let run = try world.box.rchat(person, ["group", "members", group, "--json"])
        try world.expectSuccess(run)
        return try run.lines.map { line in try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String], line) }
    }

    private func groupList(_ person: String, _ group: String) throws -> [[String: Any]] {
        let run = try world.box.rchat(person, ["list", group, "--json"])
        try world.expectSuccess(run)
        return try run.lines.map { line in try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line) }
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

    func testAGroupOfSomeoneWhoIsNotAContactOrWithoutTheirCodeIsRefusedInOneLine() throws {
        try world.makeAccount("alice")
        let run = try world.box.rchat("alice", ["group", "create", "Friends", "Nobody"])
        XCTAssertFailsCleanly(run, status: 2, mentions: "no contact named Nobody")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["group", "members", "Friends"]), status: 2, mentions: "no group named Friends")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["group", "create", " bad", "Nobody"]), status: 2, mentions: "name must be")
    }
}
