import Foundation
import XCTest

/// Edits and delete for everyone end to end (issue 31): `rchat edit NAME ID TEXT` and
/// `rchat unsend NAME ID`, one-to-one and in a group of three, with real `rchat sync`
/// processes on one real relay. Each is an item of its own with its own statuses; neither
/// moves the message's status; only the author may, within 24 hours; a deleted message
/// leaves nothing of itself on any side — not in search, not in the database's files.
extension GroupTests {
    private func message(_ person: String, _ name: String, _ id: String) throws -> [String: Any]? {
        try groupList(person, name).first { $0["id"] as? String == id }
    }

    private func edit(_ person: String, _ name: String, _ id: String, _ text: String, env: [String: String] = [:]) throws -> Run {
        try world.box.rchat(person, ["edit", name, id, text], env: env)
    }

    /// Whether `person`'s database files hold `text` anywhere (the file and its log).
    private func databaseHolds(_ person: String, _ text: String) throws -> Bool {
        let home = world.box.path("\(person)-home")
        return try ["rchat.db", "rchat.db-wal"].contains { file in
            guard let data = FileManager.default.contents(atPath: "\(home)/\(file)") else { return false }
            return data.range(of: Data(text.utf8)) != nil
        }
    }

    func testEditsReachEveryoneAndDeletesLeaveNothingBehind() throws {
        try friends(["Bob", "Carol"])
        let question = try world.send("alice", to: "Bob", "Dinner at seven?")
        try world.eventually("Bob has it", timeout: 30) { try self.message("alice", "Bob", question)?["status"] as? String == "Delivered" }
        let edited = try edit("alice", "Bob", question, "Dinner at eight?")
        try world.expectSuccess(edited)
        XCTAssertEqual(edited.lines.count, 1, "the edit's id")
        let mine = try XCTUnwrap(try message("alice", "Bob", question))
        XCTAssertEqual(mine["text"] as? String, "Dinner at eight?", "here at once")
        XCTAssertEqual(mine["edited"] as? Bool, true)
        try world.eventually("Bob sees the new text", timeout: 30) {
            let m = try self.message("bob", "Alice", question)
            return m?["text"] as? String == "Dinner at eight?" && m?["edited"] as? Bool == true
        }
        let versions = try XCTUnwrap(try message("bob", "Alice", question)?["versions"] as? [[String: Any]])
        XCTAssertEqual(versions.map { $0["text"] as? String }, ["Dinner at seven?", "Dinner at eight?"], "the original first")
        try world.eventually("Alice's edit is Delivered: nothing pending", timeout: 30) { try self.message("alice", "Bob", question)?["pending"] == nil }
        XCTAssertEqual(try message("alice", "Bob", question)?["status"] as? String, "Delivered", "the edit never moved it")
        let listed = try world.box.rchat("bob", ["list", "Alice"])
        XCTAssertTrue(listed.stdout.contains("Dinner at eight? (edited)"), listed.stdout)
        // Search finds the text in force, not the one it replaced.
        let found = try world.box.rchat("bob", ["search", "Alice", "eight"])
        try world.expectSuccess(found)
        XCTAssertTrue(found.stdout.contains("Dinner at eight?"), found.stdout)
        XCTAssertFalse(try world.box.rchat("bob", ["search", "Alice", "seven"]).stdout.contains("Dinner"), "the old text is not found")
        XCTAssertEqual(try groupList("bob", "Alice").filter { $0["type"] as? String == "message" }.count, 1, "an edit is no message")

        // Refused in one line, exit 2, nothing stored.
        XCTAssertFailsCleanly(try edit("bob", "Alice", question, "hijacked"), status: 2, mentions: "only your own")
        XCTAssertFailsCleanly(try edit("alice", "Bob", question, ""), status: 2, mentions: "empty")
        let tomorrow = String(Int(Date().timeIntervalSince1970) + 25 * 3600)
        XCTAssertFailsCleanly(try edit("alice", "Bob", question, "late", env: ["RCHAT_FAKE_NOW": tomorrow]), status: 2, mentions: "24 hours")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["unsend", "Bob", question], env: ["RCHAT_FAKE_NOW": tomorrow]), status: 2, mentions: "24 hours")
        XCTAssertFailsCleanly(try world.box.rchat("bob", ["unsend", "Alice", question]), status: 2, mentions: "only your own")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["unsend", "Bob", "xyz"]), status: 2, mentions: "not a message id")
        XCTAssertEqual(try message("bob", "Alice", question)?["text"] as? String, "Dinner at eight?")

        // In the group: Bob edits his message, Alice replies to it and reacts, then Bob deletes it for everyone.
        let plan = try world.send("bob", to: "Friends", "Picnic on Sunday at the lake?")
        try world.eventually("everyone has Bob's", timeout: 30) { try self.message("bob", "Friends", plan)?["status"] as? String == "Delivered" }
        try world.expectSuccess(try edit("bob", "Friends", plan, "Picnic on Saturday at the lake?"))
        for person in ["alice", "carol"] {
            try world.eventually("\(person) sees Bob's edit", timeout: 60) {
                try self.message(person, "Friends", plan)?["text"] as? String == "Picnic on Saturday at the lake?"
            }
        }
        try world.eventually("Bob's edit is Delivered to both", timeout: 60) { try self.message("bob", "Friends", plan)?["pending"] == nil }
        XCTAssertFailsCleanly(try edit("alice", "Friends", plan, "mine now"), status: 2, mentions: "only your own")
        let replied = try world.box.rchat("alice", ["send", "Friends", "Count me in", "--reply-to", plan])
        try world.expectSuccess(replied)
        let reply = try XCTUnwrap(replied.lines.first)
        let react = try world.box.rchat("carol", ["react", "Friends", plan, "👍"])
        try world.expectSuccess(react)
        try world.eventually("Bob has both", timeout: 60) {
            try self.message("bob", "Friends", reply) != nil && (try self.message("bob", "Friends", plan)?["reactions"] as? [Any])?.count == 1
        }
        let unsent = try world.box.rchat("bob", ["unsend", "Friends", plan])
        try world.expectSuccess(unsent)
        XCTAssertEqual(unsent.lines.count, 1, "the delete's id")
        for person in ["bob", "alice", "carol"] {
            try world.eventually("\(person) shows it deleted", timeout: 60) {
                let m = try self.message(person, "Friends", plan)
                return m?["deleted"] as? Bool == true && m?["text"] == nil && m?["reactions"] == nil
            }
        }
        XCTAssertFailsCleanly(try world.box.rchat("bob", ["unsend", "Friends", plan]), status: 2, mentions: "deleted already")
        XCTAssertFailsCleanly(try edit("bob", "Friends", plan, "again"), status: 2, mentions: "deleted")
        // The reply stays, its quote saying what became of the message.
        let alices = try world.box.rchat("alice", ["list", "Friends"])
        XCTAssertTrue(alices.stdout.contains("> Original message deleted"), alices.stdout)
        XCTAssertTrue(alices.stdout.contains("Count me in"), alices.stdout)
        XCTAssertTrue(alices.stdout.contains("< This message was deleted."), alices.stdout)
        for person in ["alice", "carol"] {
            let search = try world.box.rchat(person, ["search", "Friends", "picnic"])
            XCTAssertFalse(search.stdout.contains("Picnic"), "\(person): \(search.stdout)")
            // Secure delete, the index merged, the log truncated: no byte of either text is left.
            try world.eventually("\(person)'s files hold no word of it", timeout: 30) {
                // Its texts, and the search index's terms (stored lowercase, each after the
                // part it shares with the term before it: "saturday" then "unday").
                try ["on Sunday at the lake", "on Saturday at the lake", "lake", "aturday", "unday"].allSatisfy { try !self.databaseHolds(person, $0) }
            }
        }
        XCTAssertEqual(try message("bob", "Friends", plan)?["status"] as? String, "Delivered", "the delete never moved it")
        assertDeliveredNeverGoesBack(world)
    }
}
