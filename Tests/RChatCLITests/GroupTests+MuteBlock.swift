import Foundation
import XCTest

/// `mute`, `block` and the alerts of a group (issue 30): a group's message alerts titled with
/// the group ("Friends: Alice: New message"); muted, it stays quiet; blocked, nothing of it is
/// kept or shown and nothing is written to it, until unblocked.
extension GroupTests {
    private func count(_ text: String, in log: String) -> Int { log.components(separatedBy: text).count - 1 }

    func testMuteAndBlockTakeAGroupsNameAndAGroupsMessageAlertsTitledWithIt() throws {
        try friends(["Bob", "Carol"])
        func status(_ id: String, _ member: String) throws -> String? {
            let m = try groupList("alice", "Friends").first { $0["id"] as? String == id }
            return ((m?["deliveries"] as? [[String: String]]) ?? []).first { $0["member"] == member }?["status"]
        }
        let first = try world.send("alice", to: "Friends", "first")
        try world.eventually("Bob's sync alerts, titled with the group", timeout: 30) {
            self.world.syncLog("bob").contains("Friends: Alice: New message")
        }
        XCTAssertFalse(world.syncLog("bob").contains("first"), "never the text with show-in-alerts name")
        _ = first

        // Muted: stored and Delivered as ever, no alert.
        let muted = try world.box.rchat("bob", ["mute", "Friends"])
        try world.expectSuccess(muted)
        XCTAssertEqual(muted.lines, ["muted Friends"])
        let second = try world.send("alice", to: "Friends", "second")
        try world.eventually("Bob stored the second", timeout: 30) { try status(second, "Bob") == "Delivered" }
        XCTAssertEqual(try groupList("bob", "Friends").filter { $0["id"] as? String == second }.count, 1)
        XCTAssertEqual(count("Friends: Alice: New message", in: world.syncLog("bob")), 1, "a muted group raises no alert")
        try world.expectSuccess(try world.box.rchat("bob", ["unmute", "Friends"]))

        // Blocked: nothing kept, nothing written; back once unblocked.
        let blocked = try world.box.rchat("carol", ["block", "Friends"])
        try world.expectSuccess(blocked)
        XCTAssertEqual(blocked.lines, ["blocked Friends"])
        XCTAssertFailsCleanly(try world.box.rchat("carol", ["send", "Friends", "hello?"]), status: 2, mentions: "Friends is blocked")
        XCTAssertFailsCleanly(try world.box.rchat("carol", ["delete", "Friends"]), status: 2, mentions: "leave it (rchat group leave Friends)")
        let third = try world.send("alice", to: "Friends", "third, while Carol blocks the group")
        try world.eventually("Bob stored the third", timeout: 30) { try status(third, "Bob") == "Delivered" }
        try world.expectSuccess(try world.box.rchat("carol", ["unblock", "Friends"]))
        let fourth = try world.send("alice", to: "Friends", "fourth")
        // The same channel keeps its order: once Carol stored the fourth, she had the third before it.
        try world.eventually("Carol stored the fourth", timeout: 30) { try status(fourth, "Carol") == "Delivered" }
        let carols = try groupList("carol", "Friends").compactMap { $0["text"] as? String }
        XCTAssertFalse(carols.contains("third, while Carol blocks the group"), "\(carols)")
        XCTAssertTrue(carols.contains("fourth"), "\(carols)")
        XCTAssertEqual(try status(third, "Carol"), "Sent", "never Delivered: Carol did not keep it")
        XCTAssertFalse(world.syncLog("carol").contains("third"))
        world.assertStatusesNeverLowered()
    }
}
