import Foundation
import XCTest

/// Reactions end to end (issue 31): `rchat react NAME ID EMOJI [--remove]`, one-to-one and in
/// a group of three, with real `rchat sync` processes on one real relay. Each person has one
/// reaction per message, the latest; a reaction is an item of its own (its status shown
/// with it to its sender) and never moves the message's status.
extension GroupTests {
    private func react(_ person: String, _ name: String, _ id: String, _ emoji: String?) throws {
        let run = try world.box.rchat(person, ["react", name, id] + (emoji.map { [$0] } ?? ["--remove"]))
        try world.expectSuccess(run)
        XCTAssertEqual(run.lines.count, 1, "the reaction's id")
    }

    /// How many lines of `person`'s sync log (where its alerts go, desktop alerts being off) are `line`.
    private func lines(_ person: String, _ line: String) -> Int {
        world.syncLog(person).split(separator: "\n").filter { $0 == line }.count
    }

    private func reactions(_ person: String, _ name: String, _ id: String) throws -> [[String: String]] {
        let m = try groupList(person, name).first { $0["id"] as? String == id }
        return (m?["reactions"] as? [[String: String]]) ?? []
    }

    func testReactionsReplaceEachOtherAreTakenBackAndNeverMoveTheMessagesStatus() throws {
        try friends(["Bob", "Carol"])
        let question = try world.send("alice", to: "Bob", "Dinner at 7?")
        try world.eventually("Bob has it", timeout: 30) {
            try self.groupList("alice", "Bob").first { $0["id"] as? String == question }?["status"] as? String == "Delivered"
        }
        try react("bob", "Alice", question, "👍")
        try world.eventually("Alice sees Bob's 👍", timeout: 30) { try self.reactions("alice", "Bob", question) == [["from": "Bob", "emoji": "👍"]] }
        try world.eventually("Bob's reaction is Delivered", timeout: 30) {
            try self.reactions("bob", "Alice", question) == [["from": "You", "emoji": "👍", "status": "Delivered"]]
        }
        // A reaction to one's own message alerts (the name shown, as show-in-alerts says by default).
        try world.eventually("Alice's sync alerted it", timeout: 30) { self.lines("alice", "Bob: New reaction") == 1 }
        try react("bob", "Alice", question, "❤️")
        try world.eventually("a new one replaces it", timeout: 30) { try self.reactions("alice", "Bob", question) == [["from": "Bob", "emoji": "❤️"]] }
        let listed = try world.box.rchat("alice", ["list", "Bob"])
        XCTAssertTrue(listed.stdout.contains("❤️ 1"), listed.stdout)
        try react("bob", "Alice", question, nil)
        try world.eventually("taken back", timeout: 30) { try self.reactions("alice", "Bob", question).isEmpty }
        try world.eventually("the ❤️ alerted too; one taken back alerts nobody", timeout: 10) { self.lines("alice", "Bob: New reaction") == 2 }
        try world.expectSuccess(try world.box.rchat("alice", ["settings", "alert-reactions", "off"]))
        try react("bob", "Alice", question, "🎉")
        try world.eventually("the 🎉 is there", timeout: 30) { try self.reactions("alice", "Bob", question) == [["from": "Bob", "emoji": "🎉"]] }
        XCTAssertEqual(lines("alice", "Bob: New reaction"), 2, "alert-reactions off: no alert")
        XCTAssertEqual(try groupList("alice", "Bob").filter { $0["type"] as? String == "message" }.count, 1,
                       "a reaction is no message of the conversation")
        XCTAssertEqual(try groupList("alice", "Bob").first { $0["id"] as? String == question }?["status"] as? String, "Delivered")

        // In the group: two members react to Bob's message, each as their own.
        let plan = try world.send("bob", to: "Friends", "Picnic on Sunday?")
        try world.eventually("everyone has Bob's", timeout: 30) {
            try self.groupList("bob", "Friends").first { $0["id"] as? String == plan }?["status"] as? String == "Delivered"
        }
        try react("alice", "Friends", plan, "👍")
        try react("carol", "Friends", plan, "👍")
        try world.eventually("Bob sees both", timeout: 60) {
            try self.reactions("bob", "Friends", plan) == [["from": "Alice", "emoji": "👍"], ["from": "Carol", "emoji": "👍"]]
        }
        try world.eventually("Alice sees Carol's, and her own Delivered to both", timeout: 60) {
            try self.reactions("alice", "Friends", plan) == [["from": "Carol", "emoji": "👍"], ["from": "You", "emoji": "👍", "status": "Delivered"]]
        }
        try world.eventually("Bob's sync alerted both, titled with the group", timeout: 30) {
            self.lines("bob", "Friends: Alice: New reaction") == 1 && self.lines("bob", "Friends: Carol: New reaction") == 1
        }
        XCTAssertEqual(lines("carol", "Friends: Alice: New reaction"), 0, "a reaction to someone else's message never alerts")
        let bobs = try world.box.rchat("bob", ["list", "Friends"])
        XCTAssertTrue(bobs.stdout.contains("👍 2"), bobs.stdout)
        XCTAssertEqual(try groupList("bob", "Friends").first { $0["id"] as? String == plan }?["status"] as? String, "Delivered",
                       "the reactions never moved it")

        // Refused in one line, nothing stored.
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["react", "Friends", plan, "ab"]), status: 2, mentions: "one emoji")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["react", "Friends", plan, "👍👍"]), status: 2, mentions: "one emoji")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["react", "Friends", question, "👍"]), status: 2, mentions: "to react to")
        XCTAssertFailsCleanly(try world.box.rchat("carol", ["react", "Friends", plan, "--remove", "x"]), status: 2, mentions: "unexpected argument")
        XCTAssertFailsCleanly(try world.box.rchat("bob", ["react", "Friends", plan, "--remove"]), status: 2, mentions: "not reacted")
        assertDeliveredNeverGoesBack(world)
    }
}
