import Foundation
import XCTest

/// A clear one-line error, and nothing stored wrongly.
final class EngineBadInputTests: EngineTestCase {
    func testRefusedSendsAndListsChangeNothing() throws {
        try world.makePair()
        let kept = try world.send("alice", to: "Sam", "the one real message")
        let home = world.box.path("alice-home")
        let before = world.box.snapshot(home)
        let listed = try world.list("alice", "Sam")

        XCTAssertFailsCleanly(try world.box.rchat("alice", ["send", "Bob", "hello"]), status: 2, mentions: "no contact named Bob")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["send", "Sam", ""]), status: 2, mentions: "empty")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["send", "Sam", " \n\t "]), status: 2, mentions: "empty")
        let tooLong = String(repeating: "x", count: 60 * 1024 + 1)
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["send", "Sam", tooLong]), status: 2, mentions: "too long")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["send", "Sam"]), status: 2, mentions: "TEXT")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["list", "Bob", "--json"]), status: 2, mentions: "no contact named Bob")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["read", "Bob"]), status: 2, mentions: "no contact named Bob")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["resend", "Sam", "not-an-id"]), status: 2, mentions: "not a message id")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["resend", "Sam", String(repeating: "0", count: 32)]), status: 2, mentions: "no message")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["settings", "receipt-window-ms", "999999999"]), status: 2, mentions: "receipt-window-ms")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["sync", "--seconds", "soon"]), status: 2, mentions: "--seconds")

        XCTAssertEqual(world.box.snapshot(home), before, "a refused command changed the store")
        XCTAssertEqual(try world.list("alice", "Sam"), listed)
        XCTAssertEqual(try world.contacts("alice"), [ListedContact(name: "Sam", state: "ok", unread: 0)])

        // The one real message still goes, once.
        try world.startSync("sam")
        try world.startSync("alice")
        try world.waitForStatus("alice", "Sam", kept, "Delivered")
        XCTAssertEqual(try world.list("sam", "Alice").map(\.text), ["the one real message"])
        // A receipt proved it arrived: Resend refuses it.
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["resend", "Sam", kept]), status: 2, mentions: "nothing to resend")
        world.stopSync("alice")
        world.stopSync("sam")
    }

    func testSecondSyncOnTheSameHomeIsRefusedAndTheFirstCarriesOn() throws {
        try world.makePair()
        try world.startSync("sam")
        try world.startSync("alice")
        try world.eventually("Alice's engine is connected", timeout: 10) { self.world.syncLog("alice").contains("connected to relay") }

        let second = try world.box.rchat("alice", ["sync", "--seconds", "5"])
        XCTAssertFailsCleanly(second, status: 1, mentions: "already running")
        XCTAssertTrue(world.isSyncRunning("alice"))
        XCTAssertEqual(try world.list("alice", "Sam"), [])

        // The first one is untouched and still does its work.
        let id = try world.send("alice", to: "Sam", "still here")
        try world.waitForStatus("alice", "Sam", id, "Delivered")
        XCTAssertEqual(try world.list("sam", "Alice").map(\.id), [id])
        world.stopSync("alice")
        // Once it has stopped, the lock is free again.
        let next = try world.box.rchat("alice", ["sync", "--seconds", "0"])
        XCTAssertEqual(next.status, 0, next.stderr)
        world.stopSync("sam")
    }

    /// Nothing is sent to a blocked contact (Failed to send), nothing from them is kept, and
    /// after unblocking messages flow again.
    func testBlockedContactGetsNothingAndGivesNothing() throws {
        try world.makePair()
        let queued = try world.send("alice", to: "Sam", "queued before the block")
        XCTAssertEqual(try world.status("alice", "Sam", queued), "Sending")
        XCTAssertEqual(try world.box.rchat("alice", ["block", "Sam"]).status, 0)
        XCTAssertEqual(try world.contacts("alice").map(\.state), ["blocked"])
        let refused = try world.send("alice", to: "Sam", "written to a blocked contact")
        XCTAssertEqual(try world.status("alice", "Sam", refused), "Failed to send")

        try world.startSync("sam")
        try world.startSync("alice")
        try world.waitForStatus("alice", "Sam", queued, "Failed to send")
        let fromSam = try world.send("sam", to: "Alice", "can you hear me?")
        // Sam never had a session with Alice: it goes as a message request, which the relay
        // takes (Sent) and Alice's engine drops. Never Delivered; Alice keeps nothing from Sam.
        try world.waitForStatus("sam", "Alice", fromSam, "Sent")
        for _ in 0..<5 {
            XCTAssertNotEqual(try world.status("sam", "Alice", fromSam), "Delivered")
            XCTAssertEqual(try world.list("alice", "Sam").filter { $0.direction == "in" }, [])
        }
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.direction == "in" }, [], "nothing reached Sam")

        XCTAssertEqual(try world.box.rchat("alice", ["unblock", "Sam"]).status, 0)
        XCTAssertEqual(try world.contacts("alice").map(\.state), ["ok"])
        let after = try world.send("alice", to: "Sam", "unblocked")
        try world.waitForStatus("alice", "Sam", after, "Delivered")
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.direction == "in" }.map(\.id), [after])
        XCTAssertEqual(try world.list("alice", "Sam").filter { $0.direction == "in" }, [], "what Sam wrote while blocked was not kept")
        XCTAssertNotEqual(try world.status("sam", "Alice", fromSam), "Delivered")
        XCTAssertEqual(try world.status("alice", "Sam", queued), "Failed to send")
        XCTAssertEqual(try world.status("alice", "Sam", refused), "Failed to send")
        world.stopSync("alice")
        world.stopSync("sam")

        // A deleted contact is gone for the commands.
        XCTAssertEqual(try world.box.rchat("alice", ["delete", "Sam"]).status, 0)
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["send", "Sam", "hello"]), status: 2, mentions: "no contact named Sam")
        XCTAssertEqual(try world.contacts("alice"), [])
    }
    // Keys don't match (nothing sent until the code is entered again) is tested in
    // RecoveryKeysTests, which can set the state through the store.
}
