import Foundation
import RChatCore
@testable import RChatRelay
import RChatRelayClient
import RChatSQL
import XCTest

/// A relay operator holds the relay key and so can read and rewrite the `--persist` rows:
/// replay what was handed over before, duplicate held frames, alter them. Against real
/// `rchat` processes: every message is shown exactly once, an altered frame is never shown,
/// and no intact message is reported as "couldn't be decrypted".
final class HostileRelayOperatorTests: EngineTestCase {
    private var persistPath: String { world.box.path("relay.db") }

    private func restartRelay() throws {
        world.stopRelay(signal: SIGTERM)
        try world.startRelay(samePort: true, arguments: ["--persist", persistPath])
    }

    /// The operator's tool: the relay's own persistence, opened with the relay key.
    private func withRows(_ body: (HeldPersistence, [PersistedItem]) throws -> Void) throws {
        let key = try RelayKeyFile.loadOrCreate(path: world.keyFile)
        let rows = try HeldPersistence(path: persistPath, relayKey: key)
        defer { rows.close() }
        try body(rows, try rows.load(expiredAtOrBefore: 0).items)
        try rows.commit()
    }

    /// How many frames the relay still holds (it deletes each one the client acknowledges).
    private func heldCount() throws -> Int {
        let db = try Database(path: persistPath, fileMode: 0o600)
        defer { db.close() }
        return Int(try db.queryOne("SELECT count(*) FROM held")?.int64(at: 0) ?? -1)
    }

    private static func altered(_ payload: [UInt8]) -> [UInt8] {
        var copy = payload
        copy[copy.count - 1 - Padding.trailerBytes] ^= 0x40  // in the body's authentication tag, before the padding's trailer
        return copy
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        world.steadyTraffic = "off"  // it counts what the relay holds
    }

    func testReplayedDuplicatedAndAlteredFramesShowEachMessageOnce() throws {
        world.stopRelay()
        try world.startRelay(samePort: true, arguments: ["--persist", persistPath])
        let warmUp = try world.pairWithSession()
        world.stopSync("sam")
        let ids = try (1...3).map { try world.send("alice", to: "Sam", "held \($0)") }
        for id in ids { try world.waitForStatus("alice", "Sam", id, "Sent") }
        world.stopSync("alice")

        // The first two held frames come altered, then intact, then once more; the last
        // one comes only altered (the intact one is handed over later, below).
        world.stopRelay(signal: SIGTERM)
        var originals: [PersistedItem] = []
        try withRows { rows, items in
            originals = items
            XCTAssertEqual(items.count, ids.count, "the relay holds Alice's three messages for Sam")
            var next = (items.map(\.id).max() ?? 0) + 1
            for (n, item) in items.enumerated() {
                rows.recordDeleted(id: item.id)
                let copies = n == items.count - 1 ? [Self.altered(item.payload)]
                                                  : [Self.altered(item.payload), item.payload, item.payload]
                for payload in copies {
                    rows.recordHeld(id: next, mailbox: item.mailbox, heldAt: item.heldAt, origin: item.origin, payload: payload)
                    next += 1
                }
            }
        }
        try world.startRelay(samePort: true, arguments: ["--persist", persistPath])
        try world.startSync("sam")
        try world.receivedBeforeDeadline("sam", "Alice", Array(ids.prefix(2)))
        try world.eventually("Sam acknowledged every frame", timeout: 20) { try self.heldCount() == 0 }

        let received = try world.list("sam", "Alice").filter { $0.direction == "in" }
        XCTAssertEqual(received.map(\.id), [warmUp] + ids.prefix(2), "each intact message once, in order")
        XCTAssertEqual(received.map(\.text), ["warm-up", "held 1", "held 2"], "no altered text")
        XCTAssertEqual(try world.rows("sam", "Alice"), [], "an altered frame is not reported as undecryptable")
        XCTAssertTrue(world.syncLog("sam").contains("altered"), "the altered frames arrived and were rejected:\n\(world.syncLog("sam"))")
        // A new session: a side that took the altered frame for a lost one would tell Alice
        // now (and she would resend it or mark it Not delivered) before this message.
        try world.startSync("alice")
        let probe = try world.send("alice", to: "Sam", "after the session started")
        try world.waitForStatus("alice", "Sam", probe, "Delivered")
        XCTAssertEqual(try world.rows("sam", "Alice"), [])
        XCTAssertEqual(try world.rows("alice", "Sam"), [])
        XCTAssertEqual(try world.status("alice", "Sam", ids[2]), "Sent", "what the operator spoiled stays Sent: the relay took it")
        XCTAssertFalse(try world.list("alice", "Sam").contains { $0.resent })
        world.stopSync("alice")

        // Later the operator hands over again everything Sam acknowledged.
        world.stopSync("sam")
        world.stopRelay(signal: SIGTERM)
        try withRows { rows, _ in
            var next = (originals.map(\.id).max() ?? 0) + 1_000
            for item in originals {
                rows.recordHeld(id: next, mailbox: item.mailbox, heldAt: item.heldAt, origin: item.origin, payload: item.payload)
                next += 1
            }
        }
        XCTAssertEqual(try heldCount(), originals.count)
        try world.startRelay(samePort: true, arguments: ["--persist", persistPath])
        try world.startSync("sam")
        try world.eventually("Sam acknowledged the replayed frames", timeout: 20) { try self.heldCount() == 0 }
        let after = try world.list("sam", "Alice").filter { $0.direction == "in" }
        XCTAssertEqual(after.map(\.id), [warmUp] + ids.prefix(2) + [probe, ids[2]], "the replays add only what never arrived intact")
        XCTAssertEqual(after.map(\.text), ["warm-up", "held 1", "held 2", "after the session started", "held 3"])
        XCTAssertEqual(try world.rows("sam", "Alice"), [])

        // Alice comes back: her messages are Delivered, none Not delivered, nothing resent.
        try world.startSync("alice")
        for id in ids { try world.waitForStatus("alice", "Sam", id, "Delivered", orHigher: true) }
        XCTAssertEqual(try world.rows("alice", "Sam"), [])
        XCTAssertFalse(try world.list("alice", "Sam").contains { $0.resent })
    }
}
