import Foundation
import XCTest

/// A member rotates their account key (`rchat keys rotate`) while in a group (issue 30):
/// the group's log says so by a change they sign with the key it knew them by, so every
/// member — a contact or someone known only through the group — goes on knowing them, and
/// what they write next is shown and Delivered as before.
extension GroupTests {
    func testAMemberWhoRotatesTheirKeysStaysInTheGroupForContactsAndStrangersAlike() throws {
        try friends(["Bob", "Carol"])
        try world.expectSuccess(try world.box.rchat("bob", ["keys", "rotate"]))
        let id = try world.send("bob", to: "Friends", "new keys, same bob")
        try world.eventually("Alice and Carol stored Bob's message", timeout: 40) {
            try self.groupList("bob", "Friends").first { $0["id"] as? String == id }?["status"] as? String == "Delivered"
        }
        for person in ["alice", "carol"] {
            XCTAssertEqual(try groupList(person, "Friends").filter { $0["id"] as? String == id }.map { $0["from"] as? String }, ["Bob"], person)
            XCTAssertEqual(try members(person, "Friends").first { $0["name"] == "Bob" }?["state"], "current", person)
        }
        XCTAssertEqual(try members("bob", "Friends").first?["state"], "current")
        // The others write to him: he stores each once.
        let fromCarol = try world.send("carol", to: "Friends", "welcome back")
        try world.eventually("Carol's message Delivered to both", timeout: 40) {
            try self.groupList("carol", "Friends").first { $0["id"] as? String == fromCarol }?["status"] as? String == "Delivered"
        }
        XCTAssertEqual(try groupList("bob", "Friends").filter { $0["id"] as? String == fromCarol }.count, 1)
        // The admin rotates too, and renames: her change, signed with her new key, is taken.
        try world.expectSuccess(try world.box.rchat("alice", ["keys", "rotate"]))
        try world.expectSuccess(try world.box.rchat("alice", ["group", "rename", "Friends", "Climbing"]))
        try world.eventually("Bob and Carol took the rename", timeout: 40) { self.holds("bob", "Climbing") && self.holds("carol", "Climbing") }
        // Each rotation shows once in the group, for everyone; every change once.
        for person in ["alice", "bob", "carol"] {
            let texts = try groupList(person, "Climbing").compactMap { $0["text"] as? String }
            XCTAssertEqual(texts.filter { $0.hasSuffix("keys changed.") }.count, 2, "\(person): \(texts)")
            XCTAssertEqual(texts.filter { $0.hasSuffix("renamed the group \u{201C}Climbing\u{201D}.") }.count, 1, "\(person): \(texts)")
        }
        XCTAssertEqual(try groupList("bob", "Climbing").compactMap { $0["text"] as? String }.filter { $0 == "Your keys changed." }.count, 1)
        XCTAssertEqual(try members("carol", "Climbing").first { $0["name"] == "Bob" }?["verified"], "by Alice", "still vouched for by Alice")
        assertDeliveredNeverGoesBack(world)
    }
}
