import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Only messages the relay took in the last 72 hours are resent automatically, however long
/// ago they were written. Every process runs at a fixed RCHAT_FAKE_NOW: the relay took
/// Alice's message to Sam 72 h + 1 s before "now", and her message to Tom, written 72 h
/// + 100 s before "now" but waiting in her outbox, at "now".
final class RecoveryLimitsTests: RecoveryTestCase {
    override func tearDown() {
        super.tearDown()
        unsetenv("RCHAT_FAKE_NOW")
    }

    func testSeventyTwoHoursFromWhenTheRelayTookAMessageIsTheLimitOfAutomaticResend() throws {
        let now = Int64(Date().timeIntervalSince1970)
        let window: Int64 = 72 * 3600
        // Inherited by every process the world starts from here on.
        setenv("RCHAT_FAKE_NOW", String(now - window - 1), 1)
        world.stopRelay()
        try world.startRelay()
        try chattingPair()
        world.stopSync("sam")
        let old = try world.send("alice", to: "Sam", "taken too long ago")
        try world.waitForStatus("alice", "Sam", old, "Sent")
        world.stopSync("alice")

        setenv("RCHAT_FAKE_NOW", String(now), 1)
        try world.makeAccount("tom")
        try world.add("alice", "tom")
        try world.add("tom", "alice")
        try world.startSync("alice")
        try world.startSync("tom")
        try world.deliveredBarrier("alice", to: "Tom", "warm-up")
        world.stopSync("tom")
        let written = try world.box.rchat("alice", ["send", "Tom", "written long ago, taken now"],
                                          env: ["RCHAT_FAKE_NOW": String(now - window - 100)])
        try world.expectSuccess(written)
        let recent = written.lines[0]
        try world.waitForStatus("alice", "Tom", recent, "Sent")

        try world.reinstall("sam")
        try world.reinstall("tom")
        try world.startSync("sam")
        try world.startSync("tom")
        let notRead = try world.rowBeforeDeadline("alice", "Sam", "1 message couldn't be read on Sam's phone.")
        XCTAssertEqual(notRead.action, "resend")
        XCTAssertEqual(notRead.ids, [old])
        let resent = try world.rowBeforeDeadline("alice", "Tom", "Tom's phone couldn't read 1 message, so rChat sent it again.")
        XCTAssertNil(resent.action)
        XCTAssertEqual(resent.ids, [recent])
        try world.waitForStatus("alice", "Tom", recent, "Delivered", timeout: 20)
        try world.deliveredBarrier("alice", to: "Sam", "barrier")
        XCTAssertEqual(try world.status("alice", "Sam", old), "Not delivered")
        XCTAssertEqual(try world.list("alice", "Sam").first { $0.id == old }?.resent, false)
        XCTAssertEqual(try world.list("alice", "Tom").first { $0.id == recent }?.resent, true)
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.direction == "in" }.map(\.text), ["barrier"])
        XCTAssertEqual(try world.list("tom", "Alice").filter { $0.direction == "in" }.map(\.text), ["written long ago, taken now"])
        world.stopSync("alice")
        world.stopSync("sam")
        world.stopSync("tom")
    }
}
