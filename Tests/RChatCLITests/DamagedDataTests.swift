import Foundation
import XCTest
import RChatSQL
import RChatStore

/// A damaged database, device key file or sealed session row: every command that meets it
/// says so in one line and exits 1, and the files are left byte for byte as they were.
/// Real `rchat` processes on real data (two accounts that talked through a real relay).
final class DamagedDataTests: EngineTestCase {
    static let everyCommand: [[String]] = [["list", "Sam"], ["list", "Sam", "--json"], ["contacts"], ["send", "Sam", "hello"],
                                           ["sync", "--seconds", "1"], ["check", "--print"]]
    var home: String { world.box.path("alice-home") }
    var device: String { world.box.path("alice-device") }
    var database: String { "\(home)/rchat.db" }

    /// Alice and Sam talked both ways; both engines stopped cleanly. Alice's home has
    /// messages, contacts and a saved session.
    func talkedAndStopped() throws {
        try world.pairWithSession()
        let reply = try world.send("sam", to: "Alice", "a reply")
        try world.waitForStatus("sam", "Alice", reply, "Delivered")
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// Every file of Alice's home and device directory, with its bytes — but SQLite's
    /// shared-memory index (`-shm`, rebuilt by whoever opens the file), which holds no data.
    func aliceFiles() -> [String: Data] {
        var files: [String: Data] = [:]
        for (name, data) in world.box.snapshot(home) where !name.hasSuffix("-shm") {
            files["home/\(name)"] = data
        }
        for (name, data) in world.box.snapshot(device) { files["device/\(name)"] = data }
        return files
    }

    func restore(_ files: [String: Data]) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: home) where files["home/\(name)"] == nil {
            try FileManager.default.removeItem(atPath: "\(home)/\(name)")
        }
        for (name, data) in files where name.hasPrefix("home/") {
            try data.write(to: URL(fileURLWithPath: "\(home)/\(name.dropFirst(5))"))
        }
    }

    func assertRefusedAndUnchanged(_ commands: [[String]], mentions: String, _ what: String,
                                   file: StaticString = #filePath, line: UInt = #line) throws {
        let before = aliceFiles()
        for args in commands {
            let run = try world.box.rchat("alice", args)
            XCTAssertFailsCleanly(run, status: 1, mentions: mentions, file: file, line: line)
            XCTAssertEqual(aliceFiles(), before, "\(what): `rchat \(args.joined(separator: " "))` changed the files", file: file, line: line)
        }
    }

    /// Makes one row unreadable at the SQL level: `table` loses STRICT (only then does a
    /// column take a value of another type, as in a hand-edited file), and `column` of the
    /// row `condition` selects gets `value`. Returns a reader of that value as stored.
    func storeOfAnotherType(_ value: SQLValue, table: String, column: String, where condition: String) throws -> () throws -> SQLValue? {
        let db = try Database(path: database)
        defer { db.close() }
        try db.execute("PRAGMA writable_schema = ON")
        try db.execute("UPDATE sqlite_master SET sql = replace(sql, ') STRICT', ')') WHERE name = ?", [.text(table)])
        try db.execute("PRAGMA writable_schema = OFF")
        // A new connection reads the schema as it now is.
        let again = try Database(path: database)
        defer { again.close() }
        try again.execute("UPDATE \(table) SET \(column) = ? WHERE \(condition)", [value])
        let row = { [database] () throws -> SQLValue? in
            let db = try Database(path: database)
            defer { db.close() }
            return try db.queryOne("SELECT \(column) FROM \(table) WHERE \(condition)")?[column]
        }
        XCTAssertEqual(try row(), value)
        return row
    }

    /// A saved session that cannot be read (not damaged: the read itself fails) stops the
    /// engine and the check with that error, and entering the contact's code again does
    /// not take it for "no damage here": every command leaves the row as it was.
    func testASavedSessionThatCannotBeReadStopsEveryCommandAndIsLeftAsItWas() throws {
        try talkedAndStopped()
        let row = try storeOfAnotherType(.text("not a sealed state"), table: "session_state", column: "sealed", where: "1")
        for args in [["sync", "--seconds", "1"], ["check", "--print"], ["add", try world.code("sam")]] {
            let run = try world.box.rchat("alice", args)
            XCTAssertEqual(run.status, 1, "`rchat \(args[0])`: \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("SELECT sealed, updated_at FROM session_state"), "`rchat \(args[0])`: \(run.stderr)")
            XCTAssertEqual(try row(), .text("not a sealed state"), "`rchat \(args[0])` changed the row")
        }
    }

    /// A setting row that cannot be read (its value of another type than the column's, as a
    /// hand-edited file may hold) is an error, never the default: with "nothing" chosen for
    /// alerts, a failed read must not put the sender's name in one. The check stops with
    /// the error (exit 1, no alert) and the row is left as it was.
    func testAnAlertSettingThatCannotBeReadStopsTheCheck() throws {
        // Sam's message waits at the relay for Alice (sent in their session after she left).
        try world.pairWithSession()
        world.stopSync("alice")
        let id = try world.send("sam", to: "Alice", "for the check")
        try world.waitForStatus("sam", "Alice", id, "Sent")
        world.stopSync("sam")
        try world.expectSuccess(world.box.rchat("alice", ["settings", "show-in-alerts", "nothing"]))
        let row = try storeOfAnotherType(.blob([0x00, 0xff]), table: "settings", column: "value", where: "key = 'show_in_alerts'")

        let run = try world.box.rchat("alice", ["check", "--print"])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(run.lines, [], "no alert, above all none naming Sam")
        XCTAssertTrue(run.stderr.split(separator: "\n").last?.contains("SELECT value FROM settings") ?? false, run.stderr)
        XCTAssertEqual(try row(), .blob([0x00, 0xff]), "the row is left as it was")
    }

    /// Overwrites the first 200 bytes of the root page of `table` (its header, cell pointers
    /// and cells).
    func damageRootPage(of table: String) throws {
        let store = try Store(path: database)
        let root = try XCTUnwrap(store.database.queryOne("SELECT rootpage FROM sqlite_master WHERE name = ?", [.text(table)])).int64(at: 0)
        let pageSize = try XCTUnwrap(store.database.queryOne("PRAGMA page_size")).int64(at: 0)
        store.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: database + "-wal"), "checkpointed at close")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: database))
        let start = Int((root - 1) * pageSize)
        for i in 0..<200 { bytes[start + i] = UInt8(truncatingIfNeeded: i &* 37 &+ 11) }
        try bytes.write(to: URL(fileURLWithPath: database))
    }

    func testDamagedDatabasePagesAreReportedAndLeftAsTheyWere() throws {
        try talkedAndStopped()
        let pristine = aliceFiles()
        // Tables every command reads: every command refuses.
        for table in ["account", "contacts", "session_state", "settings", "outbox"] {
            try restore(pristine)
            try damageRootPage(of: table)
            try assertRefusedAndUnchanged(Self.everyCommand, mentions: "left unchanged", "\(table) damaged")
        }
        // The messages: what reads them, and the engine (which checks the whole file
        // before its first write), refuse.
        try restore(pristine)
        try damageRootPage(of: "messages")
        try assertRefusedAndUnchanged([["list", "Sam"], ["list", "Sam", "--json"], ["sync", "--seconds", "1"], ["check", "--print"]],
                                      mentions: "left unchanged", "messages damaged")
        // The header.
        try restore(pristine)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: database))
        for i in 0..<100 { bytes[i] = UInt8(truncatingIfNeeded: i &* 37) }
        try bytes.write(to: URL(fileURLWithPath: database))
        try assertRefusedAndUnchanged(Self.everyCommand, mentions: "left unchanged", "header damaged")

        // Undamaged again, everything works.
        try restore(pristine)
        XCTAssertEqual(try world.list("alice", "Sam").map(\.text), ["warm-up", "a reply"])
    }

    /// A store a newer rChat wrote (a schema version past this one's): every command says so
    /// in one line, exits 1, and writes nothing; at this version's schema all works again.
    func testAStoreWrittenByANewerRChatIsRefusedAndLeftAsItWas() throws {
        try talkedAndStopped()
        let pristine = aliceFiles()
        do {
            let store = try Store(path: database)
            try store.database.setUserVersion(Store.schemaVersion + 1)
            store.close()
        }
        try assertRefusedAndUnchanged(Self.everyCommand + [["contacts", "--json"], ["read", "Sam"], ["code"]],
                                      mentions: "written by a newer rChat (schema version \(Store.schemaVersion + 1)", "newer schema")
        let run = try world.box.rchat("alice", ["list", "Sam"])
        XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)

        try restore(pristine)
        XCTAssertEqual(try world.list("alice", "Sam").map(\.text), ["warm-up", "a reply"])
    }

    func testADamagedDeviceKeyIsReportedAndLeftAsItWas() throws {
        try talkedAndStopped()
        let key = "\(device)/device.key"
        let original = try Data(contentsOf: URL(fileURLWithPath: key))
        for damaged in [Data(original.prefix(original.count - 3)), Data("RCHATDEX1".utf8) + original.dropFirst(9), Data()] {
            try damaged.write(to: URL(fileURLWithPath: key))
            try assertRefusedAndUnchanged(Self.everyCommand + [["code"]], mentions: "device key file", "device key damaged")
        }
        try original.write(to: URL(fileURLWithPath: key))
        XCTAssertEqual(try world.list("alice", "Sam").count, 2)
    }

    /// The sealed session state does not open: the engine refuses to start (it would have
    /// replaced it with a new session); what does not use it works. Entering the contact's
    /// code again lets it go, and the two talk again.
    func testADamagedSavedSessionStopsTheEngineUntilTheCodeIsEnteredAgain() throws {
        try talkedAndStopped()
        do {
            let store = try Store(path: database)
            defer { store.close() }
            let sealed = try XCTUnwrap(store.database.queryOne("SELECT sealed FROM session_state")).blob(at: 0)
            var flipped = sealed
            flipped[flipped.count / 2] ^= 0x40
            try store.database.execute("UPDATE session_state SET sealed = ?", [.blob(flipped)])
        }
        try assertRefusedAndUnchanged([["sync", "--seconds", "1"], ["check", "--print"]], mentions: "saved session with Sam",
                                      "sealed state damaged")
        XCTAssertEqual(try world.list("alice", "Sam").map(\.text), ["warm-up", "a reply"])
        XCTAssertEqual(try world.contacts("alice").map(\.state), ["ok"])

        let again = try world.box.rchat("alice", ["add", try world.code("sam")])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stdout.contains("damaged saved session was dropped"), again.stdout)
        try world.startSync("sam")
        try world.startSync("alice")
        let after = try world.send("alice", to: "Sam", "after starting over")
        try world.waitForStatus("alice", "Sam", after, "Delivered")
        world.stopSync("alice")
        world.stopSync("sam")
    }
}
