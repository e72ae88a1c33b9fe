import Foundation
import XCTest
import RChatSQL
#if canImport(Glibc)
import Glibc
#endif

/// Alerts from a running engine without a view: `rchat sync`, and the linger after the
/// view quits, follow the check's policy (grouped, a summary after five, never twice).
final class HeadlessAlertTests: RecoveryTestCase {   // a reinstall: a resent message goes back to Sending on purpose
    /// The alert lines a sync wrote to standard error (desktop alerts are off here).
    func alertLines(_ person: String) -> [String] {
        world.syncLog(person).split(separator: "\n").map(String.init).filter {
            $0.hasSuffix(": New message") || $0.hasSuffix(" new messages")
        }
    }

    func testSyncAlertsOnceEachAndSummarisesMoreThanFiveArrivingTogether() throws {
        try world.pairWithSession()   // its warm-up message is the first alert
        try world.eventually("Sam's sync alerted the warm-up", timeout: 10) { self.alertLines("sam") == ["Alice: New message"] }
        let one = try world.send("alice", to: "Sam", "one")
        try world.waitForStatus("alice", "Sam", one, "Delivered")
        try world.eventually("and the next one", timeout: 10) { self.alertLines("sam") == ["Alice: New message", "Alice: New message"] }

        // Seven held while Sam is away arrive together when his sync comes back: one summary.
        world.stopSync("sam")
        var held: [String] = []
        for n in 1...7 { held.append(try world.send("alice", to: "Sam", "held \(n)")) }
        for id in held { try world.waitForStatus("alice", "Sam", id, "Sent") }
        try world.startSync("sam")
        for id in held { try world.waitForStatus("alice", "Sam", id, "Delivered") }
        try world.eventually("one summary for the seven", timeout: 10) { self.alertLines("sam") == ["rChat: 7 new messages"] }

        // Nothing is alerted twice: a new sync over the same store says nothing of them.
        world.stopSync("sam")
        try world.startSync("sam")
        let after = try world.send("alice", to: "Sam", "after the restart")
        try world.waitForStatus("alice", "Sam", after, "Delivered")
        try world.eventually("only the new one alerted", timeout: 10) { self.alertLines("sam") == ["Alice: New message"] }
        world.stopSync("sam")
        XCTAssertEqual(alertLines("sam"), ["Alice: New message"])
    }

    /// How many alerts `person`'s store recorded (every alert shown is recorded first).
    func alertCount(_ person: String) throws -> Int {
        let db = try Database(path: world.box.path("\(person)-home/rchat.db"), readOnly: true)
        defer { db.close() }
        return Int(try XCTUnwrap(try db.queryOne("SELECT COUNT(*) AS n FROM alerts", [])).int64("n"))
    }

    /// Over a session with receipts, Read receipts, new sessions after restarts and a
    /// could-not-read notice, the side that received none of the messages alerts nothing;
    /// and a contact the user deleted neither comes back as a request nor alerts.
    func testOnlyMessagesAlertAndADeletedContactNeverComesBack() throws {
        try world.pairWithSession()
        let read = try world.send("alice", to: "Sam", "read me")
        try world.waitForStatus("alice", "Sam", read, "Delivered")
        XCTAssertEqual(try world.box.rchat("sam", ["read", "Alice"]).status, 0)
        try world.waitForStatus("alice", "Sam", read, "Read")
        // A new session and a could-not-read notice: Sam reinstalls on this machine while a
        // message waits for him.
        world.stopSync("sam")
        let held = try world.send("alice", to: "Sam", "held over the reinstall")
        try world.waitForStatus("alice", "Sam", held, "Sent")
        try world.reinstall("sam")
        try world.startSync("sam")
        try world.waitForStatus("alice", "Sam", held, "Delivered", timeout: 20)   // resent by itself after the notice
        try world.deliveredBarrier("alice", to: "Sam", "after it all")
        XCTAssertEqual(try alertCount("alice"), 0, "Alice received receipts, sessions and a notice, never a message")
        XCTAssertFalse(world.syncLog("alice").contains("New message"), world.syncLog("alice"))

        // A stranger's request alerts once; deleted, the stranger's next request is dropped.
        try world.makeAccount("carol")
        XCTAssertEqual(try world.box.rchat("carol", ["add", try world.code("alice")]).status, 0)
        try world.startSync("carol")
        let first = try world.send("carol", to: "Alice", "hello from a stranger")
        try world.waitForStatus("carol", "Alice", first, "Sent", timeout: 20)   // a request: no receipt until accepted
        try world.eventually("one request alert", timeout: 10) { try self.alertCount("alice") == 1 }
        XCTAssertTrue(world.syncLog("alice").contains("rChat: New message request"), world.syncLog("alice"))
        XCTAssertEqual(try world.contacts("alice").map(\.state).sorted(), ["ok", "request"])
        XCTAssertEqual(try world.box.rchat("alice", ["delete", "Carol"]).status, 0)
        let second = try world.send("carol", to: "Alice", "me again")
        try world.waitForStatus("carol", "Alice", second, "Sent")
        // Everything for Alice's mailbox goes through one queue: once this is Delivered, the
        // request before it was handled.
        let barrier = try world.send("sam", to: "Alice", "behind the request")
        try world.waitForStatus("sam", "Alice", barrier, "Delivered", timeout: 20)
        XCTAssertEqual(try world.contacts("alice").map(\.name), ["Sam"], "the deleted contact did not come back")
        try world.eventually("Sam's message alerted", timeout: 10) { self.world.syncLog("alice").contains("Sam: New message") }
        XCTAssertEqual(try alertCount("alice"), 2, "the request from Carol and Sam's message; nothing for the deleted contact")
        XCTAssertEqual(try world.status("carol", "Alice", second), "Sent", "dropped: no receipt")
    }
}
