import Foundation
import XCTest

/// Replies end to end (issue 31): `rchat send NAME TEXT --reply-to ID`, one-to-one and in a
/// group of three, each with real `rchat sync` processes on one real relay. A reply is a
/// message of its own (its own id and statuses; the quoted message's never move); every side
/// shows the quote from its own copy; what cannot be quoted is refused in one line.
extension GroupTests {
    private func reply(_ person: String, to name: String, _ target: String, _ text: String) throws -> String {
        let run = try world.box.rchat(person, ["send", name, text, "--reply-to", target])
        try world.expectSuccess(run)
        return try XCTUnwrap(run.lines.first)
    }

    private func entry(_ person: String, _ name: String, _ id: String) throws -> [String: Any]? {
        try groupList(person, name).first { $0["id"] as? String == id }
    }

    func testRepliesQuoteTheirMessageOneToOneAndInAGroupAndNeverMoveItsStatus() throws {
        try friends(["Bob", "Carol"])
        // One-to-one: Bob answers Alice.
        let question = try world.send("alice", to: "Bob", "Dinner at 7?")
        try world.eventually("Bob has it", timeout: 30) { try self.entry("alice", "Bob", question)?["status"] as? String == "Delivered" }
        let answer = try reply("bob", to: "Alice", question, "Yes, 7 works")
        try world.eventually("Alice has the answer", timeout: 30) { try self.entry("alice", "Bob", answer) != nil }
        let got = try XCTUnwrap(try entry("alice", "Bob", answer))
        XCTAssertEqual(got["reply_to"] as? String, question)
        XCTAssertEqual(got["text"] as? String, "Yes, 7 works")
        XCTAssertEqual(try entry("bob", "Alice", answer)?["reply_to"] as? String, question)
        try world.eventually("the answer is Delivered to Bob's side", timeout: 30) {
            try self.entry("bob", "Alice", answer)?["status"] as? String == "Delivered"
        }
        XCTAssertEqual(try entry("alice", "Bob", question)?["status"] as? String, "Delivered", "the question's status did not move")
        let lines = try world.box.rchat("alice", ["list", "Bob"])
        try world.expectSuccess(lines)
        let quoteLine = try XCTUnwrap(lines.lines.firstIndex { $0.contains("> You: Dinner at 7?") }, lines.stdout)
        XCTAssertTrue(lines.lines[quoteLine + 1].contains("Yes, 7 works"), "the quote goes above the reply: \(lines.stdout)")

        // In a group: Carol answers Bob's message; every member shows the quote from their copy.
        let plan = try world.send("bob", to: "Friends", "Picnic on Sunday?")
        try world.eventually("everyone has Bob's", timeout: 30) { try self.entry("bob", "Friends", plan)?["status"] as? String == "Delivered" }
        let yes = try reply("carol", to: "Friends", plan, "Count me in")
        try world.eventually("Alice and Bob stored Carol's reply", timeout: 60) {
            try self.entry("carol", "Friends", yes)?["status"] as? String == "Delivered"
        }
        for person in ["alice", "bob"] {
            let m = try XCTUnwrap(try entry(person, "Friends", yes))
            XCTAssertEqual(m["reply_to"] as? String, plan)
            XCTAssertEqual(m["from"] as? String, "Carol")
        }
        let alices = try world.box.rchat("alice", ["list", "Friends"])
        XCTAssertTrue(alices.stdout.contains("> Bob: Picnic on Sunday?"), alices.stdout)
        let bobs = try world.box.rchat("bob", ["list", "Friends"])
        XCTAssertTrue(bobs.stdout.contains("> You: Picnic on Sunday?"), bobs.stdout)
        XCTAssertEqual(try entry("bob", "Friends", plan)?["status"] as? String, "Delivered")

        let found = try world.box.rchat("alice", ["search", "--all", "count"])
        try world.expectSuccess(found)
        XCTAssertTrue(found.stdout.contains("Count me in"), found.stdout)

        // Refused in one line, nothing stored: an id of another conversation, one nobody
        // wrote, one that is not an id, and a reply with a file.
        let before = try groupList("alice", "Friends").count
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["send", "Friends", "wrong place", "--reply-to", question]),
                              status: 2, mentions: "no message \(question) in Friends")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["send", "Bob", "to nothing", "--reply-to", String(repeating: "ab", count: 16)]),
                              status: 2, mentions: "to reply to")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["send", "Bob", "x", "--reply-to", "nothex"]), status: 2, mentions: "message id")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["send", "Bob", "--file", "/etc/hostname", "--reply-to", question]),
                              status: 2, mentions: "--reply-to")
        XCTAssertEqual(try groupList("alice", "Friends").count, before)
        XCTAssertEqual(try groupList("alice", "Bob").filter { $0["direction"] as? String == "out" }.count, 1, "only the question")
        assertDeliveredNeverGoesBack(world)
    }
}
