import Foundation
import XCTest

/// A member who reinstalls (issue 30, recovery per member): the group comes back to them
/// from an admin's log, what they could not read is resent to them alone (Resent, a row in
/// the group naming them), and every other member's delivery stays as it was.
extension GroupTests {
    private func deliveries(_ person: String, _ id: String) throws -> [String: String] {
        let m = try groupList(person, "Friends").first { $0["id"] as? String == id }
        return Dictionary(uniqueKeysWithValues: ((m?["deliveries"] as? [[String: String]]) ?? []).map { ($0["member"]!, $0["status"]!) })
    }

    func testAMemberWhoReinstallsGetsTheGroupBackAndWhatTheyMissedResentToThemAlone() throws {
        try friends(["Bob", "Carol"])
        let before = try world.send("alice", to: "Friends", "before Carol went")
        try world.eventually("everyone stored the first", timeout: 30) { try self.deliveries("alice", before) == ["Bob": "Delivered", "Carol": "Delivered"] }
        world.stopSync("carol")
        let held = [try world.send("alice", to: "Friends", "while you were away 1"), try world.send("alice", to: "Friends", "while you were away 2")]
        for id in held {
            try world.eventually("Bob stored it, the relay holds Carol's", timeout: 30) { try self.deliveries("alice", id) == ["Bob": "Delivered", "Carol": "Sent"] }
        }

        try world.reinstall("carol")
        try world.startSync("carol")
        for id in held {
            try world.eventually("Carol has it again", timeout: 60) { try self.deliveries("alice", id)["Carol"] == "Delivered" }
        }
        XCTAssertEqual(try members("carol", "Friends").map { $0["name"]! }, ["Carol", "Alice", "Bob"], "the group is back, from Alice's log")
        let carols = try groupList("carol", "Friends").filter { $0["direction"] as? String == "in" && $0["type"] as? String == "message" }
        for (id, text) in zip(held, ["while you were away 1", "while you were away 2"]) {
            let copies = carols.filter { $0["id"] as? String == id }
            XCTAssertEqual(copies.count, 1, "\(id) once")
            XCTAssertEqual(copies.first?["text"] as? String, text)
            XCTAssertEqual(copies.first?["from"] as? String, "Alice")
        }
        // Alice's group says what happened, naming Carol; Bob's delivery never went again.
        let rows = try groupList("alice", "Friends").filter { $0["type"] as? String == "row" }.compactMap { $0["text"] as? String }
        XCTAssertTrue(rows.contains("Carol's phone couldn't read 2 messages, so rChat sent them again."), "\(rows)")
        for id in held { XCTAssertEqual(world.timelines["alice"]?["\(id) to Bob"]?.last, "Delivered") }
        XCTAssertTrue(world.syncLog("alice").contains("Carol started over: their groups are handed to them again"),
                      world.diagnostics())

        // The group carries on, both ways, Carol included.
        let after = try world.send("alice", to: "Friends", "welcome back")
        try world.eventually("everyone stored it", timeout: 30) { try self.groupList("alice", "Friends").first { $0["id"] as? String == after }?["status"] as? String == "Delivered" }
        let fromCarol = try world.send("carol", to: "Friends", "I'm back")
        try world.eventually("Alice and Bob stored Carol's", timeout: 60) {
            try self.groupList("carol", "Friends").first { $0["id"] as? String == fromCarol }?["status"] as? String == "Delivered"
        }
        XCTAssertEqual(try groupList("bob", "Friends").filter { $0["id"] as? String == fromCarol }.count, 1)
        assertDeliveredNeverGoesBack(world)
    }

    /// What a member writes to someone who reinstalled, before an admin handed the group to
    /// them again, waits there for the group (kept, not shown, no receipt), and is shown
    /// once the admin's log makes the group theirs again.
    func testWhatComesBeforeTheGroupIsBackWaitsForIt() throws {
        try friends(["Bob", "Carol"])
        // Carol's export keeps Bob (a member she knows through the group), so after her
        // reinstall Bob's channel to her opens at once, before any admin hands her the group.
        world.stopSync("carol")
        let held = try world.send("bob", to: "Friends", "from Bob while Carol was away")
        try world.eventually("the relay holds Carol's copy", timeout: 30) { try self.deliveries("bob", held)["Carol"] == "Sent" }
        world.stopSync("alice")   // the admin away: nobody hands Carol the group yet

        try world.reinstall("carol")
        try world.startSync("carol")
        try world.eventually("Bob's copy, resent, waits at Carol for the group", timeout: 60) {
            self.world.syncLog("carol").contains("a group message from Bob waits for a group this account does not hold yet")
        }
        let fresh = try world.send("bob", to: "Friends", "written while Carol has no group")
        try world.eventually("that one waits too", timeout: 30) {
            self.world.syncLog("carol").components(separatedBy: "a group message from Bob waits for a group").count - 1 >= 2
        }
        XCTAssertFailsCleanly(try world.box.rchat("carol", ["list", "Friends"]), status: 2, mentions: "Friends")
        XCTAssertEqual(try deliveries("bob", fresh)["Carol"], "Sent", "not Delivered while it only waits")

        try world.startSync("alice")
        for id in [held, fresh] {
            try world.eventually("Carol holds the group and stored Bob's", timeout: 60) { try self.deliveries("bob", id)["Carol"] == "Delivered" }
        }
        let carols = try groupList("carol", "Friends").filter { $0["from"] as? String == "Bob" }.compactMap { $0["text"] as? String }
        XCTAssertEqual(carols.sorted(), ["from Bob while Carol was away", "written while Carol has no group"])
        assertDeliveredNeverGoesBack(world)
    }

    /// A member Carol knows only through the group is in her export: her new install has his
    /// channel at once, so what he sealed for her old one — before she reinstalled, and after,
    /// before he knew — is named in her could-not-read notice and resent to her alone,
    /// automatically (seed 661: it was a frame nobody could place, lost).
    func testAMemberKnownOnlyThroughTheGroupIsInHerExportAndWhatHeSealedForTheOldInstallIsResent() throws {
        try friends(["Bob", "Carol"])
        world.stopSync("carol")
        let before = try world.send("bob", to: "Friends", "from Bob, before Carol reinstalled")
        try world.eventually("the relay holds Carol's copy", timeout: 30) { try self.deliveries("bob", before) == ["Alice": "Delivered", "Carol": "Sent"] }
        try world.reinstall("carol")
        let after = try world.send("bob", to: "Friends", "from Bob, after, in the old session")
        try world.eventually("the relay holds that one too", timeout: 30) { try self.deliveries("bob", after) == ["Alice": "Delivered", "Carol": "Sent"] }
        XCTAssertNotEqual(try world.box.rchat("carol", ["group", "members", "Friends"]).status, 0, "no group comes with the export")

        try world.startSync("carol")
        for id in [before, after] {
            try world.eventually("Carol has it, resent", timeout: 60) { try self.deliveries("bob", id)["Carol"] == "Delivered" }
        }
        let rows = try groupList("bob", "Friends").filter { $0["type"] as? String == "row" }.compactMap { $0["text"] as? String }
        XCTAssertTrue(rows.contains("Carol's phone couldn't read 2 messages, so rChat sent them again."), "\(rows)")
        XCTAssertFalse(rows.contains { $0.hasPrefix("Carol's phone started a new secure session") }, "\(rows)")
        let carols = try groupList("carol", "Friends").filter { $0["from"] as? String == "Bob" }.compactMap { $0["text"] as? String }
        XCTAssertEqual(carols.sorted(), ["from Bob, after, in the old session", "from Bob, before Carol reinstalled"])
        XCTAssertFalse(try world.box.rchat("carol", ["contacts"]).stdout.contains("Bob"), "still a member, not a contact")
        for id in [before, after] { XCTAssertEqual(world.timelines["bob"]?["\(id) to Alice"]?.last, "Delivered", "Alice's delivery untouched") }
        assertDeliveredNeverGoesBack(world)
    }

    /// A member Carol knows only through the group, restored from an export older than the
    /// group: her new install cannot read what he wrote before it (it does not know him until
    /// the group is back), so his side shows the started-over row in the group, naming her,
    /// with Resend for her alone.
    func testAMemberNotInHerOlderExportGetsTheStartedOverRowAndResendsByHand() throws {
        var older = ""
        try friends(["Bob", "Carol"]) { older = try world.exportAccount("carol") }
        world.stopSync("carol")
        let lost = try world.send("bob", to: "Friends", "from Bob, lost with Carol's phone")
        try world.eventually("the relay holds Carol's copy", timeout: 30) { try self.deliveries("bob", lost) == ["Alice": "Delivered", "Carol": "Sent"] }

        try world.reinstall("carol", from: older)
        try world.startSync("carol")
        let row = "Carol's phone started a new secure session with you. 1 message may not have reached them."
        try world.eventually("Bob's group says so", timeout: 60) {
            try self.groupList("bob", "Friends").contains { $0["type"] as? String == "row" && $0["text"] as? String == row }
        }
        let shown = try XCTUnwrap(try groupList("bob", "Friends").first { $0["text"] as? String == row })
        XCTAssertEqual(shown["action"] as? String, "resend", "\(shown)")
        XCTAssertEqual(try deliveries("bob", lost)["Carol"], "Sent", "it keeps its status: nothing proved either way")

        let resent = try world.box.rchat("bob", ["resend", "Friends"])
        try world.expectSuccess(resent)
        XCTAssertEqual(resent.lines, ["sending 1 message again"])
        try world.eventually("Carol has it", timeout: 60) { try self.deliveries("bob", lost)["Carol"] == "Delivered" }
        XCTAssertEqual(try groupList("carol", "Friends").filter { $0["id"] as? String == lost }.count, 1)
        XCTAssertEqual(world.timelines["bob"]?["\(lost) to Alice"]?.last, "Delivered", "Alice's delivery untouched")
        assertDeliveredNeverGoesBack(world)
    }
}

extension GroupTests {
    /// A member Bob knows only through the group moves to a new phone (a new device key): his
    /// engine goes on, his group says so in a row naming her, and nothing he writes goes to
    /// that device until he enters her code, which pins it; then it does.
    func testAMemberKnownOnlyThroughTheGroupOnANewPhoneIsNamedInTheGroupAndHeldUntilHerCodeIsEntered() throws {
        try friends(["Bob", "Carol"])
        world.stopSync("carol")
        try world.reinstall("carol", newPhone: true)
        try world.startSync("carol")
        let row = "Carol is using a new device. Enter their code again to verify it."
        try world.eventually("Bob's group says so", timeout: 60) {
            try self.groupList("bob", "Friends").contains { $0["type"] as? String == "row" && $0["text"] as? String == row }
        }
        XCTAssertTrue(world.syncLog("bob").contains("Carol is using a device whose key is not pinned; nothing goes to it until their code is entered here"))
        XCTAssertEqual(try groupList("bob", "Friends").filter { $0["text"] as? String == row }.count, 1, "once")
        let held = try world.send("bob", to: "Friends", "to Carol's new phone?")
        try world.eventually("Alice has Bob's message", timeout: 30) { try self.deliveries("bob", held)["Alice"] == "Delivered" }
        XCTAssertTrue(world.isSyncRunning("bob"), world.syncLog("bob"))
        XCTAssertNotEqual(try deliveries("bob", held)["Carol"], "Delivered", "nothing goes to a device not pinned")

        try world.add("bob", "carol")
        try world.eventually("entering her code lets it go", timeout: 60) { try self.deliveries("bob", held)["Carol"] == "Delivered" }
        assertDeliveredNeverGoesBack(world)
    }
}
