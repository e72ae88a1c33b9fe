import Foundation
import XCTest

/// The user's Resend in a group (issue 30): decided per delivery, so only the members who
/// need it get the message again; the others' Delivered stays.
extension GroupTests {
    func testResendInAGroupGoesOnlyToTheMembersWhoNeedIt() throws {
        try friends(["Bob", "Carol"])
        world.stopSync("carol")
        let id = try world.send("alice", to: "Friends", "are you there, Carol?")
        func deliveries() throws -> [String: String] {
            let m = try groupList("alice", "Friends").first { $0["id"] as? String == id }
            return Dictionary(uniqueKeysWithValues: ((m?["deliveries"] as? [[String: String]]) ?? []).map { ($0["member"]!, $0["status"]!) })
        }
        try world.eventually("Bob stored it, the relay holds Carol's", timeout: 30) { try deliveries() == ["Bob": "Delivered", "Carol": "Sent"] }

        let resent = try world.box.rchat("alice", ["resend", "Friends", id])
        try world.expectSuccess(resent)
        XCTAssertEqual(resent.lines, ["sending 1 message again"])
        XCTAssertEqual(try deliveries()["Bob"], "Delivered", "Bob's delivery is not sent again")
        let carol = try deliveries()["Carol"]
        XCTAssertTrue(["Sending", "Sent"].contains(carol), "\(String(describing: carol))")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["resend", "Friends", String(repeating: "ab", count: 16)]), status: 2,
                              mentions: "Friends has no message of yours with id")

        try world.startSync("carol")
        try world.eventually("Carol stored it", timeout: 30) { try deliveries() == ["Bob": "Delivered", "Carol": "Delivered"] }
        XCTAssertEqual(try groupList("carol", "Friends").filter { $0["id"] as? String == id }.count, 1, "shown once")
        XCTAssertEqual(try groupList("bob", "Friends").filter { $0["id"] as? String == id }.count, 1, "shown once")
        let nothing = try world.box.rchat("alice", ["resend", "Friends"])
        try world.expectSuccess(nothing)
        XCTAssertEqual(nothing.lines, ["sending 0 messages again"])
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["resend", "Friends", id]), status: 2, mentions: "it arrived, there is nothing to resend")
        XCTAssertEqual(world.timelines["alice"]?["\(id) to Bob"], ["Delivered"], "Bob's delivery was not sent again")
        XCTAssertEqual(world.timelines["alice"]?["\(id) to Carol"]?.last, "Delivered")
        assertDeliveredNeverGoesBack(world)
    }
}
