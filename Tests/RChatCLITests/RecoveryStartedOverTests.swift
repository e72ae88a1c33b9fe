import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A contact who started over without a usable notice, and a resent message whose
/// first copy did arrive after all.
final class RecoveryStartedOverTests: RecoveryTestCase {
    /// The relay lost what it held (restarted without --persist), then Sam reinstalled:
    /// his notice names nothing, so Alice is told her recent message may not have reached
    /// him; it keeps Sent until she resends it. A message still Sending then (no session with
    /// Sam since the relay restarted) is not counted: it goes in the new session, where Sam
    /// can read it.
    func testStartedOverWithoutANoticeShowsTheRowAndKeepsTheStatus() throws {
        try chattingPair()
        let held = try messagesHeldForSam(1, "lost with the relay")
        world.stopRelay(signal: SIGKILL)
        try world.startRelay(samePort: true)
        let waiting = try world.send("alice", to: "Sam", "never left this device")
        XCTAssertEqual(try world.status("alice", "Sam", waiting), "Sending")
        try world.reinstall("sam")
        try world.startSync("sam")

        let row = try world.rowBeforeDeadline(
            "alice", "Sam", "Sam's phone started a new secure session with you. 1 message may not have reached them.")
        XCTAssertEqual(row.action, "resend")
        XCTAssertEqual(row.ids, held)
        try world.waitForStatus("alice", "Sam", waiting, "Delivered", timeout: 20)
        try world.deliveredBarrier("alice", to: "Sam", "hello again")
        let alice = try world.list("alice", "Sam")
        XCTAssertEqual(alice.first { $0.id == held[0] }?.status, "Sent", "keeps its status: it may have arrived")
        XCTAssertFalse(alice.contains { $0.resent }, "\(alice)")
        let aliceRows = try world.rows("alice", "Sam")
        XCTAssertEqual(aliceRows.count, 1, "\(aliceRows)")
        XCTAssertFalse(try world.list("sam", "Alice").contains { $0.id == held[0] })
        XCTAssertEqual(try world.rows("sam", "Alice"), [], "Sam could read everything he was handed")

        let resend = try world.box.rchat("alice", ["resend", "Sam", "--all"])
        XCTAssertEqual(resend.status, 0, resend.stderr)
        XCTAssertEqual(resend.lines, ["sending 1 message again"])
        try world.waitForStatus("alice", "Sam", held[0], "Delivered", timeout: 20)
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.id == held[0] }.map(\.text), ["lost with the relay 1"])
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// Alice resends a message the relay still holds: both copies reach Sam, who shows it once.
    func testAResentMessageWhoseFirstCopyArrivedIsShownOnce() throws {
        try chattingPair()
        let held = try messagesHeldForSam(1)
        let resend = try world.box.rchat("alice", ["resend", "Sam", held[0]])
        XCTAssertEqual(resend.status, 0, resend.stderr)
        XCTAssertEqual(resend.lines, ["sending 1 message again"])
        // `resend` made it Sending; Sent again means the relay took the second copy too.
        try world.waitForStatus("alice", "Sam", held[0], "Sent", timeout: 20)
        XCTAssertEqual(world.timelines["alice"]?[held[0]]?.suffix(1), ["Sent"])

        try world.startSync("sam")
        try world.waitForStatus("alice", "Sam", held[0], "Delivered", timeout: 20)
        // A later message comes after both held copies: by its arrival both were handled.
        try world.deliveredBarrier("alice", to: "Sam", "after both copies")
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.id == held[0] }.map(\.text), ["while you were away 1"])
        XCTAssertFalse(try world.list("alice", "Sam").first { $0.id == held[0] }!.resent, "a user's Resend is no automatic Resent")
        world.stopSync("sam")
        world.stopSync("alice")
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.id == held[0] }.count, 1, "shown once, also after a restart")
    }
}
