import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Only messages sent in the last 72 hours are resent automatically.
/// Every process (relay, both syncs, every command) runs at a fixed RCHAT_FAKE_NOW; Alice's
/// two messages are written at 72 h + 1 s and 72 h - 1 s before it.
final class RecoveryLimitsTests: RecoveryTestCase {
    override func tearDown() {
        super.tearDown()
        unsetenv("RCHAT_FAKE_NOW")
    }

    func testSeventyTwoHoursIsTheLimitOfAutomaticResend() throws {
        let now = Int64(Date().timeIntervalSince1970)
        // Inherited by every process the world starts from here on.
        setenv("RCHAT_FAKE_NOW", String(now), 1)
        world.stopRelay()
        try world.startRelay()
        try chattingPair()
        world.stopSync("sam")
        let window: Int64 = 72 * 3600
        var ids: [String] = []
        for (text, age) in [("just too old", window + 1), ("just in time", window - 1)] {
            let run = try world.box.rchat("alice", ["send", "Sam", text], env: ["RCHAT_FAKE_NOW": String(now - age)])
            try world.expectSuccess(run)
            ids.append(run.lines[0])
        }
        let (old, recent) = (ids[0], ids[1])
        for id in ids { try world.waitForStatus("alice", "Sam", id, "Sent") }
        try world.reinstall("sam")
        try world.startSync("sam")

        let notRead = try world.rowBeforeDeadline("alice", "Sam", "1 message couldn't be read on Sam's phone.")
        XCTAssertEqual(notRead.action, "resend")
        XCTAssertEqual(notRead.ids, [old])
        let resent = try world.rowBeforeDeadline("alice", "Sam", "Sam's phone couldn't read 1 message, so rChat sent it again.")
        XCTAssertNil(resent.action)
        XCTAssertEqual(resent.ids, [recent])
        try world.waitForStatus("alice", "Sam", recent, "Delivered", timeout: 20)
        try world.deliveredBarrier("alice", to: "Sam", "barrier")
        let alice = try world.list("alice", "Sam")
        XCTAssertEqual(alice.first { $0.id == old }?.status, "Not delivered")
        XCTAssertEqual(alice.first { $0.id == old }?.resent, false)
        XCTAssertEqual(alice.first { $0.id == recent }?.resent, true)
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.direction == "in" }.map(\.text).sorted(), ["barrier", "just in time"])
        world.stopSync("alice")
        world.stopSync("sam")
    }
}
