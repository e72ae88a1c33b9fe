import Foundation
import XCTest
import RChatCore
import RChatSQL
import DesktopBusFixture

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

    /// In a chat with a timer, the desktop alert goes when its message does: the id the
    /// notification service gave is closed through it (a service on a private session bus
    /// records both).
    func testTheAlertIsClosedWhenItsMessageDisappears() throws {
        let saved = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"]
        defer { if let saved { setenv("DBUS_SESSION_BUS_ADDRESS", saved, 1) } else { unsetenv("DBUS_SESSION_BUS_ADDRESS") } }
        let desktop = try PrivateDesktop(directory: world.box.path("bus"))
        defer { desktop.stop() }
        setenv("DBUS_SESSION_BUS_ADDRESS", desktop.address, 1)

        try world.makePair()
        try world.expectSuccess(world.box.rchat("sam", ["settings", "desktop-alerts", "on"]))
        try world.startSync("sam")
        try world.startSync("alice")
        let control = try XCTUnwrap(try world.box.rchat("alice", ["timer", "Sam", "30s"]).lines.last)
        try world.waitForStatus("alice", "Sam", control, "Delivered", timeout: 20)
        let id = try world.send("alice", to: "Sam", "gone soon")
        try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 20)
        try world.eventually("the alert shown", timeout: 10) { desktop.notifications.count == 1 }
        let shownID = desktop.notifications[0].id
        try world.eventually("the alert's id kept", timeout: 10) {
            let db = try Database(path: self.world.box.path("sam-home") + "/rchat.db", readOnly: true)
            defer { db.close() }
            return try db.queryOne("SELECT 1 FROM alerts WHERE notification_id = ?", [.integer(Int64(shownID))]) != nil
        }
        try world.expectSuccess(world.box.rchat("sam", ["read", "Alice"]))
        let shown = try XCTUnwrap(try expiresAt("sam", "Alice", id))
        world.stopSync("sam")
        world.stopSync("alice")
        XCTAssertEqual(desktop.service.closed, [], "nothing closed before its time")
        _ = try listed("sam", "Alice", env: ["RCHAT_FAKE_NOW": String(shown + 1)])
        try world.eventually("the alert closed", timeout: 10) { desktop.service.closed == [shownID] }
    }

    func timers(_ person: String) throws -> [String] {
        let run = try world.box.rchat(person, ["contacts", "--json"])
        try world.expectSuccess(run)
        return try run.lines.map { try XCTUnwrap((try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["timer"] as? String) }
    }

    /// Both sides change the timer while apart (the same counter, neither saw the other's):
    /// once they meet, both end on the same change (the tie broken by id), and each shows
    /// both rows.
    func testBothChangingAtOnceEndOnTheSameTimer() throws {
        try world.pairWithSession()
        world.stopSync("alice")
        world.stopSync("sam")
        try world.expectSuccess(world.box.rchat("alice", ["timer", "Sam", "1h"]))
        // A tie of counters, broken by id (ids begin with their milliseconds): Sam's wins.
        try world.eventually("a millisecond later", timeout: 1) { true }
        try world.expectSuccess(world.box.rchat("sam", ["timer", "Alice", "5m"]))
        XCTAssertEqual(try timers("alice"), ["1h"])
        XCTAssertEqual(try timers("sam"), ["5m"])
        try world.startSync("alice")
        try world.startSync("sam")
        try world.eventually("both end on the later change", timeout: 30) {
            try self.timers("alice") == ["5m"] && self.timers("sam") == ["5m"]
        }
        for (person, name, them) in [("alice", "Sam", "Sam"), ("sam", "Alice", "Alice")] {
            try world.eventually("\(person) shows both rows", timeout: 20) {
                let texts = try self.world.list(person, name).map(\.text)
                return texts.contains { $0.hasSuffix("set disappearing messages to 1 hour.") }
                    && texts.contains { $0.hasSuffix("set disappearing messages to 5 minutes.") }
                    && texts.contains { $0.hasPrefix(them) }
            }
        }
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// A contact whose clock is ten years ahead (RCHAT_FAKE_NOW on their `rchat timer`, so the
    /// change's id begins with that time) turns the timer off; their sync, on a true clock,
    /// sends it (a sync whose clock is years ahead keeps no session to send it in). Alice's
    /// later change must still win on both sides: changes are ordered by a logical counter,
    /// not by clocks, and what `rchat timer` prints is what is in force.
    func testAContactsClockYearsAheadDoesNotPinTheTimer() throws {
        try world.pairWithSession()
        try world.expectSuccess(world.box.rchat("alice", ["timer", "Sam", "1d"]))
        try world.eventually("both on 1 day", timeout: 30) { try self.timers("alice") == ["1d"] && self.timers("sam") == ["1d"] }
        let tenYearsAhead = ["RCHAT_FAKE_NOW": String(Int(Date().timeIntervalSince1970) + 10 * 365 * 86_400)]
        world.stopSync("sam")
        try world.expectSuccess(world.box.rchat("sam", ["timer", "Alice", "off"], env: tenYearsAhead))
        try world.startSync("sam")
        try world.eventually("both off", timeout: 30) { try self.timers("alice") == ["off"] && self.timers("sam") == ["off"] }

        let set = try world.box.rchat("alice", ["timer", "Sam", "1h"])
        try world.expectSuccess(set)
        XCTAssertEqual(set.lines.first, "disappearing messages set to 1 hour for Sam")
        XCTAssertEqual(try timers("alice"), ["1h"], "what rchat timer printed is in force at once")
        try world.eventually("both end on Alice's change", timeout: 30) { try self.timers("sam") == ["1h"] }
        XCTAssertEqual(try timers("alice"), ["1h"])
        try world.eventually("Sam shows Alice's row", timeout: 20) {
            try self.world.list("sam", "Alice").contains { $0.text == "Alice set disappearing messages to 1 hour." }
        }
        XCTAssertTrue(try world.list("alice", "Sam").contains { $0.text == "You set disappearing messages to 1 hour." })

        // A contact whose rChat was changed to send the greatest counter there can be (its
        // plaintext rewritten before its engine seals it), to spend the counters: refused.
        world.stopSync("sam")
        let offAgain = try XCTUnwrap(try world.box.rchat("sam", ["timer", "Alice", "off"]).lines.last)
        let samDB = try Database(path: world.box.path("sam-home") + "/rchat.db", fileMode: 0o600)
        let guardTrigger = try XCTUnwrap(try samDB.queryOne("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND sql LIKE '%content never changes%'"))
        try samDB.execute("DROP TRIGGER \(try guardTrigger.string("name"))")
        try samDB.execute("UPDATE messages SET content = ? WHERE id = ?",
                          [.blob([3, 1, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0]), .blob(try XCTUnwrap(MessageID(hex: offAgain)).bytes)])
        try samDB.execute(try guardTrigger.string("sql"))
        samDB.close()
        try world.startSync("sam")
        try world.eventually("the forged change reached Alice", timeout: 30) {
            try self.world.syncLog("alice").contains("far past every one seen") || self.timers("alice") != ["1h"]
        }
        XCTAssertEqual(try timers("alice"), ["1h"], "refused")
        XCTAssertFalse(try world.list("alice", "Sam").contains { $0.id == offAgain }, "not stored")
        let again = try world.box.rchat("alice", ["timer", "Sam", "8h"])
        try world.expectSuccess(again)
        XCTAssertEqual(try timers("alice"), ["8h"], "the user's change still takes effect")
        world.stopSync("alice")
        world.stopSync("sam")

        // A contact that sent the greatest counter there can be: a change here cannot come
        // after it, so it is refused in one line, with nothing stored and nothing reported.
        let db = try Database(path: world.box.path("alice-home") + "/rchat.db", fileMode: 0o600)
        try db.execute("UPDATE conversations SET timer_seconds = 0, timer_counter = 4611686018427387904")
        db.close()
        let before = try world.list("alice", "Sam")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["timer", "Sam", "8h"]), status: 1, mentions: "cannot be changed")
        XCTAssertEqual(try world.list("alice", "Sam"), before, "nothing stored")
        XCTAssertEqual(try timers("alice"), ["off"])
    }
}
