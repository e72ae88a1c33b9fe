import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

final class OpeningTests: StoreTestCase {
    func testFreshStoreHasTheWholeSchemaAndSettings() throws {
        let db = store.database
        XCTAssertEqual(try db.userVersion, Store.schemaVersion)
        let tables = Set(try db.query("SELECT name FROM sqlite_master WHERE type = 'table'").map { try $0.string("name") })
        XCTAssertTrue(tables.isSuperset(of: ["account", "settings", "contacts", "messages", "status_log", "outbox",
                                             "session_state", "system_rows", "alerts", "undecryptable"]), "\(tables)")
        XCTAssertEqual(try db.queryOne("PRAGMA journal_mode")?.string(at: 0), "wal")
        XCTAssertEqual(try db.queryOne("PRAGMA synchronous")?.int64(at: 0), 2, "FULL")
        XCTAssertEqual(try db.queryOne("PRAGMA foreign_keys")?.int64(at: 0), 1)
        XCTAssertEqual(try db.queryOne("PRAGMA application_id")?.int64(at: 0), Int64(Migrations.applicationID))
    }

    func testReopeningIsIdempotent() throws {
        let row = try store.insertOutgoing(contact: sam, id: .random(), content: .text("kept"), at: 5)
        let schema = try store.database.query("SELECT type, name, sql FROM sqlite_master ORDER BY name").map(\.values)
        store.close()
        for _ in 0..<3 {
            let again = try Store(home: home.path)
            XCTAssertEqual(try again.database.userVersion, Store.schemaVersion)
            XCTAssertEqual(try again.database.query("SELECT type, name, sql FROM sqlite_master ORDER BY name").map(\.values), schema)
            XCTAssertEqual(try again.message(row)?.content, .text("kept"))
            XCTAssertEqual(try again.contacts().map(\.name), ["Sam"])
            again.close()
        }
        store = try Store(home: home.path)
        let next = try store.insertOutgoing(contact: sam, id: .random(), content: .text("after"), at: 6)
        XCTAssertEqual(try store.message(next)?.position, 2)
    }

    func testLaterStepsAreAppliedInOrderOnTopOfEarlierOnes() throws {
        store.close()
        let steps = Migrations.all + [
            Migration(version: Migrations.all.count + 1, sql: "CREATE TABLE later_notes (contact_id INTEGER, text TEXT) STRICT;"),
            Migration(version: Migrations.all.count + 2, sql: "INSERT INTO later_notes VALUES (1, 'from step 2');"),
        ]
        store = try Store(path: dbPath, migrations: steps)
        XCTAssertEqual(try store.database.userVersion, Migrations.all.count + 2)
        XCTAssertEqual(try store.database.query("SELECT text FROM later_notes").map { try $0.string("text") }, ["from step 2"])
        XCTAssertEqual(try store.contacts().map(\.name), ["Sam"], "earlier data kept")
        store.close()
        store = try Store(path: dbPath, migrations: steps)
        XCTAssertEqual(try count("later_notes"), 1, "no step runs twice")
    }

    /// Version 3 marks an account row of an earlier version as kept in the clear (the engine seals it
    /// when its device opens it); rows written since say how they are kept.
    func testAnAccountRowOfVersionOneIsMarkedInTheClear() throws {
        store.close()
        try FileManager.default.removeItem(at: home)
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        store = try Store(path: dbPath, migrations: Array(Migrations.all.prefix(1)))
        try store.database.execute("""
            INSERT INTO account (id, name, relay_address, public_key, secret_key, invite_token, mailbox_seed,
                                 device_key, device_seal, created_at)
            VALUES (1, 'Me', '127.0.0.1:7000/key', x'01', x'0203', x'04', x'07', x'05', x'06', 10)
            """)
        store.close()
        store = try Store(path: dbPath)
        XCTAssertEqual(try store.database.userVersion, Store.schemaVersion)
        let account = try XCTUnwrap(store.account())
        XCTAssertEqual(account.secretsAtRest, .clear)
        XCTAssertEqual(account.secretKey, [2, 3])
        XCTAssertEqual(account.mailboxSeed, [7])
        XCTAssertThrowsError(try store.database.execute("UPDATE account SET secrets_sealed = 2"))
        XCTAssertEqual(try store.account()?.secretsAtRest, .clear, "a value other than 0 or 1 is refused")
    }

    func testFailedStepLeavesTheFileAtTheLastWholeVersion() throws {
        store.close()
        let steps = Migrations.all + [
            Migration(version: Migrations.all.count + 1, sql: "CREATE TABLE half (x); INSERT INTO nowhere VALUES (1);"),
        ]
        XCTAssertThrowsError(try Store(path: dbPath, migrations: steps))
        store = try Store(path: dbPath)
        XCTAssertEqual(try store.database.userVersion, Migrations.all.count)
        XCTAssertNil(try store.database.queryOne("SELECT 1 FROM sqlite_master WHERE name = 'half'"))
    }

    func testNewerSchemaIsRefusedAndTheFileLeftAlone() throws {
        try store.database.setUserVersion(Store.schemaVersion + 5)
        store.close()
        let before = try bytes(dbPath)
        XCTAssertThrowsError(try Store(home: home.path)) { error in
            XCTAssertEqual(error as? StoreError, .newerSchema(path: dbPath, found: Store.schemaVersion + 5, known: Store.schemaVersion))
            XCTAssertTrue("\(error)".contains("newer rChat"))
        }
        XCTAssertEqual(try bytes(dbPath), before)
        store = nil
    }

    func testAnotherProgramsDatabaseIsRefused() throws {
        let other = home.appendingPathComponent("other.db").path
        let db = try Database(path: other)
        try db.execute("CREATE TABLE notes (text TEXT)")
        db.close()
        let before = try bytes(other)
        XCTAssertThrowsError(try Store(path: other)) { error in
            guard case .unreadable(let path, let reason)? = error as? StoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, other)
            XCTAssertTrue(reason.contains("another program"), reason)
        }
        XCTAssertEqual(try bytes(other), before)
    }

    func testAMissingDirectoryIsACannotOpenError() throws {
        let path = home.appendingPathComponent("no/such/dir/rchat.db").path
        XCTAssertThrowsError(try Store(path: path)) { error in
            guard case .cannotOpen(let p, _)? = error as? StoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(p, path)
            XCTAssertTrue("\(error)".hasPrefix("cannot open \(path): "), "\(error)")
        }
    }

    func testFilesAreOwnerOnly() throws {
        _ = try store.insertOutgoing(contact: sam, id: .random(), content: .text("x"), at: 1)
        for suffix in ["", "-wal", "-shm"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: dbPath + suffix), suffix)
            XCTAssertEqual(try mode(dbPath + suffix), 0o600, "rchat.db\(suffix)")
        }
    }

    func testWiderModesOfAnExistingFileAreTightened() throws {
        store.close()
        XCTAssertEqual(chmod(dbPath, 0o644), 0)
        store = try Store(home: home.path)
        XCTAssertEqual(try mode(dbPath), 0o600)
    }

    func testFileThatIsNotADatabaseIsRefusedAndUnchanged() throws {
        let path = home.appendingPathComponent("junk.db").path
        let junk = Data((0..<10_000).map { _ in UInt8.random(in: 0...255) })
        try junk.write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try Store(path: path)) { error in
            guard case .unreadable(let p, _)? = error as? StoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(p, path)
            let line = "\(error)"
            XCTAssertFalse(line.contains("\n"))
            XCTAssertTrue(line.contains("not a database"), line)
        }
        XCTAssertEqual(try bytes(path), junk)
    }

    func testDamagedDatabaseIsRefusedAndUnchanged() throws {
        _ = try store.insertOutgoing(contact: sam, id: .random(), content: .text("x"), at: 1)
        store.close()
        store = nil
        // Keep the 100-byte header (so SQLite still takes it for a database) and scramble
        // the rest of page 1, where the schema lives.
        var damaged = try bytes(dbPath)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dbPath + "-wal"), "checkpointed on close")
        for i in 100..<4096 { damaged[i] = UInt8.random(in: 0...255) }
        try damaged.write(to: URL(fileURLWithPath: dbPath))
        XCTAssertThrowsError(try Store(home: home.path)) { error in
            guard case .unreadable? = error as? StoreError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try bytes(dbPath), damaged)
    }

    func testDamageFoundBeforeAnUpgradeWritesNothing() throws {
        // A file one version behind, whose table pages are damaged: the upgrade would write,
        // so the store checks the file first.
        try store.transaction { tx in
            for i in 0..<200 { try tx.insertOutgoing(contact: sam, id: .random(), content: .text(String(repeating: "x", count: 200)), at: Int64(i)) }
        }
        store.close()
        let db = try Database(path: dbPath)
        try db.execute("PRAGMA journal_mode = DELETE")
        db.close()
        var damaged = try bytes(dbPath)
        XCTAssertGreaterThan(damaged.count, 8 * 4096)
        for i in (4 * 4096)..<(6 * 4096) { damaged[i] = 0xFF }
        try damaged.write(to: URL(fileURLWithPath: dbPath))
        XCTAssertThrowsError(try Store(home: home.path)) { error in
            guard case .unreadable(_, let reason)? = error as? StoreError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.hasPrefix("damaged") || reason.contains("malformed"), reason)
        }
        XCTAssertEqual(try bytes(dbPath), damaged)
        store = nil
    }

    /// The contacts' page damaged where SQLite reads on without an error (a row comes back
    /// with a NULL, or not at all): the check of the small tables at opening finds it, and
    /// the file and its write-ahead log (holding a committed transaction) stay as they were.
    func testADamagedSmallTableIsFoundAtOpeningAndTheLogLeftAlone() throws {
        let root = try XCTUnwrap(store.database.queryOne("SELECT rootpage FROM sqlite_master WHERE name = 'contacts'")).int64(at: 0)
        store.close()
        store = nil
        // A committed transaction left in the log: closed without a checkpoint.
        let db = try Database(path: dbPath)
        try db.execute("INSERT INTO settings (key, value) VALUES ('in-the-log', 'yes')")
        db.leaveAsItIs()
        db.close()
        let log = try bytes(dbPath + "-wal")
        XCTAssertFalse(log.isEmpty)
        var damaged = try bytes(dbPath)
        let start = Int(root - 1) * 4096 + 8
        for i in 0..<200 { damaged[start + i] = UInt8(truncatingIfNeeded: i &* 37 &+ 11) }
        try damaged.write(to: URL(fileURLWithPath: dbPath))

        XCTAssertThrowsError(try Store(home: home.path)) { error in
            guard case .unreadable(_, let reason)? = error as? StoreError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.hasPrefix("damaged"), reason)
        }
        XCTAssertEqual(try bytes(dbPath), damaged)
        XCTAssertEqual(try bytes(dbPath + "-wal"), log, "the log was neither checkpointed nor deleted")
    }
}
