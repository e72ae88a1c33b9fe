import Foundation
import XCTest
import RChatSQL

/// Disappearing messages with real processes: the timer travels as a control item with a
/// row on each side, a message carries the timer it was written with, its clock starts when
/// the relay took it (the sender) or when it was shown (the receiver), and once it ran out
/// (RCHAT_FAKE_NOW) it is gone from both sides, their store files included.
final class DisappearingTests: EngineTestCase {
    func expiresAt(_ person: String, _ name: String, _ id: String, env: [String: String] = [:]) throws -> Int? {
        let run = try world.box.rchat(person, ["list", name, "--json"], env: env)
        try world.expectSuccess(run)
        for line in run.lines where line.contains(id) {
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return object["expires_at"] as? Int
        }
        throw TimedOut(what: "message \(id) in \(person)'s list", seconds: 0, context: run.stdout)
    }

    func listed(_ person: String, _ name: String, env: [String: String]) throws -> [String] {
        let run = try world.box.rchat(person, ["list", name, "--json"], env: env)
        try world.expectSuccess(run)
        return run.lines
    }

    /// Every byte of a store's files, once its log is checkpointed into the database.
    func storeBytes(_ person: String) throws -> Data {
        let path = world.box.path("\(person)-home") + "/rchat.db"
        let db = try Database(path: path, fileMode: 0o600)
        _ = try db.query("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        if let wal = try? Data(contentsOf: URL(fileURLWithPath: path + "-wal")) { bytes.append(wal) }
        return bytes
    }

    func testAMessageDisappearsFromBothSidesOnceItsTimeRanOut() throws {
        let warmUp = try world.pairWithSession()
        let set = try world.box.rchat("alice", ["timer", "Sam", "30s"])
        try world.expectSuccess(set)
        XCTAssertEqual(set.lines.first, "disappearing messages set to 30 seconds for Sam")
        let control = try XCTUnwrap(set.lines.last)
        try world.waitForStatus("alice", "Sam", control, "Delivered", timeout: 20)
        XCTAssertTrue(try world.list("alice", "Sam").contains { $0.text == "You set disappearing messages to 30 seconds." })
        XCTAssertTrue(try world.list("sam", "Alice").contains { $0.text == "Alice set disappearing messages to 30 seconds." })

        let secret = "zyzzyva vanishing words"
        let id = try world.send("alice", to: "Sam", secret)
        try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 20)
        let sent = try XCTUnwrap(try expiresAt("alice", "Sam", id), "the sender's clock started when the relay took it")
        XCTAssertLessThanOrEqual(abs(sent - Int(Date().timeIntervalSince1970) - 30), 5)
        XCTAssertNil(try expiresAt("sam", "Alice", id), "not shown yet: the receiver's clock has not started")
        XCTAssertNil(try expiresAt("alice", "Sam", warmUp), "written before the timer: no timer")
        try world.expectSuccess(world.box.rchat("sam", ["read", "Alice"]))
        let shown = try XCTUnwrap(try expiresAt("sam", "Alice", id))
        world.stopSync("alice")
        world.stopSync("sam")

        // Before its time it stays; once its time ran out it is gone on each side, at the
        // next opening, whatever is run.
        let before = ["RCHAT_FAKE_NOW": String(min(sent, shown) - 1)]
        XCTAssertTrue(try listed("alice", "Sam", env: before).contains { $0.contains(id) })
        let after = ["RCHAT_FAKE_NOW": String(max(sent, shown) + 1)]
        for (person, name) in [("alice", "Sam"), ("sam", "Alice")] {
            let lines = try listed(person, name, env: after)
            XCTAssertFalse(lines.contains { $0.contains(id) || $0.contains("zyzzyva") }, "\(person): \(lines)")
            XCTAssertTrue(lines.contains { $0.contains(warmUp) }, "what had no timer stays")
            XCTAssertEqual(lines.filter { $0.contains("disappearing messages to 30 seconds") }.count, 1, "the row stays")
            XCTAssertNil(try storeBytes(person).range(of: Data("zyzzyva".utf8)), "\(person)'s store file no longer holds the text")
            // A clock that jumps back never brings it back.
            let back = try listed(person, name, env: ["RCHAT_FAKE_NOW": String(min(sent, shown) - 1000)])
            XCTAssertFalse(back.contains { $0.contains(id) })
        }
        let search = try world.box.rchat("alice", ["search", "--all", "zyzzyva"], env: after)
        try world.expectSuccess(search)
        XCTAssertEqual(search.lines, ["no message has: zyzzyva"], "nor is it found by search")
    }

    func testAnUnknownDurationIsOneLineListingTheValidOnes() throws {
        try world.makePair()
        for bad in ["2h", "30", "forever", ""] {
            XCTAssertFailsCleanly(try world.box.rchat("alice", ["timer", "Sam", bad]), status: 2,
                                  mentions: "30s, 5m, 1h, 8h, 1d, 1w, 4w")
        }
        XCTAssertEqual(try world.list("alice", "Sam"), [], "nothing stored")
    }
}
