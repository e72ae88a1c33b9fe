import XCTest
@testable import RChatSQL

final class DatabaseTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    func testErrorCarriesCodesMessageAndStatement() throws {
        let db = try Database(path: ":memory:")
        try db.execute("CREATE TABLE people (name TEXT NOT NULL UNIQUE)")
        try db.execute("INSERT INTO people (name) VALUES (?)", ["Sam"])
        let sql = "INSERT INTO people (name)\n    VALUES (?)"
        XCTAssertThrowsError(try db.execute(sql, ["Sam"])) { error in
            guard let e = error as? DatabaseError else { return XCTFail("\(error)") }
            XCTAssertEqual(e.code, ResultCode.constraint)
            XCTAssertEqual(e.extendedCode, ResultCode.constraintUnique)
            XCTAssertTrue(e.isUniqueViolation)
            XCTAssertEqual(e.message, "UNIQUE constraint failed: people.name")
            XCTAssertEqual(e.sql, sql)
            XCTAssertEqual(e.description, "UNIQUE constraint failed: people.name (SQLite 19/2067) in: INSERT INTO people (name) VALUES (?)")
            XCTAssertFalse(e.description.contains("\n"))
        }
        XCTAssertThrowsError(try db.query("SELEKT 1")) { error in
            let e = error as? DatabaseError
            XCTAssertEqual(e?.code, ResultCode.error)
            XCTAssertEqual(e?.sql, "SELEKT 1")
            XCTAssertTrue(e?.message.contains("syntax error") ?? false)
        }
    }

    func testArgumentCountAndSeveralStatementsAreRefused() throws {
        let db = try Database(path: ":memory:")
        XCTAssertThrowsError(try db.query("SELECT ?, ?", [1])) { XCTAssertEqual(($0 as? DatabaseError)?.code, ResultCode.range) }
        XCTAssertThrowsError(try db.execute("CREATE TABLE a (x); CREATE TABLE b (x)")) {
            XCTAssertEqual(($0 as? DatabaseError)?.code, ResultCode.misuse)
        }
        try db.executeScript("CREATE TABLE a (x); CREATE TABLE b (x);")
        XCTAssertEqual(try db.query("SELECT name FROM sqlite_master ORDER BY name").map { try $0.string("name") }, ["a", "b"])
        try db.execute("SELECT 1;  ")  // a trailing semicolon is still one statement
    }

    func testTransactionCommitsAndRollsBackOnThrow() throws {
        struct Boom: Error {}
        let db = try Database(path: directory.path("t.db"))
        try db.execute("CREATE TABLE t (x INTEGER)")
        try db.transaction { try db.execute("INSERT INTO t VALUES (1)") }
        XCTAssertThrowsError(try db.transaction {
            try db.execute("INSERT INTO t VALUES (2)")
            XCTAssertTrue(db.isInTransaction)
            throw Boom()
        }) { XCTAssertTrue($0 is Boom, "the body's own error comes out") }
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try db.query("SELECT x FROM t").map { try $0.int64("x") }, [1])
        let value = try db.transaction(.deferred) { 42 }
        XCTAssertEqual(value, 42)
    }

    func testNestedTransactionThrowsAndLeavesTheOuterIntact() throws {
        let db = try Database(path: ":memory:")
        try db.execute("CREATE TABLE t (x INTEGER)")
        try db.transaction {
            try db.execute("INSERT INTO t VALUES (1)")
            XCTAssertThrowsError(try db.transaction { try db.execute("INSERT INTO t VALUES (2)") }) {
                XCTAssertEqual(($0 as? DatabaseError)?.code, ResultCode.misuse)
            }
            XCTAssertTrue(db.isInTransaction)
        }
        XCTAssertEqual(try db.query("SELECT x FROM t").map { try $0.int64("x") }, [1])
    }

    func testSavepointUndoesOnlyItsOwnChanges() throws {
        struct Boom: Error {}
        let db = try Database(path: ":memory:")
        try db.execute("CREATE TABLE t (x INTEGER)")
        try db.transaction {
            try db.execute("INSERT INTO t VALUES (1)")
            XCTAssertThrowsError(try db.savepoint {
                try db.execute("INSERT INTO t VALUES (2)")
                throw Boom()
            })
            try db.savepoint { try db.execute("INSERT INTO t VALUES (3)") }
        }
        XCTAssertEqual(try db.query("SELECT x FROM t ORDER BY x").map { try $0.int64("x") }, [1, 3])
    }

    func testStatementCacheReusesPreparedStatements() throws {
        let db = try Database(path: ":memory:")
        try db.execute("CREATE TABLE t (x INTEGER)")
        let before = db.cachedStatementCount
        for i in 0..<100 { try db.execute("INSERT INTO t VALUES (?)", [.integer(Int64(i))]) }
        XCTAssertEqual(db.cachedStatementCount, before + 1, "one statement for one SQL text")
        for _ in 0..<3 { _ = try db.query("SELECT count(*) FROM t") }
        XCTAssertEqual(db.cachedStatementCount, before + 2)
        // A statement that failed mid-way is reset and usable again.
        try db.execute("CREATE UNIQUE INDEX tx ON t(x)")
        XCTAssertThrowsError(try db.execute("INSERT INTO t VALUES (?)", [5]))
        try db.execute("INSERT INTO t VALUES (?)", [500])
        XCTAssertEqual(try db.queryOne("SELECT count(*) FROM t")?.int64(at: 0), 101)
    }

    func testConnectionFacts() throws {
        let db = try Database(path: directory.path("facts.db"))
        try db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, x INTEGER)")
        try db.execute("INSERT INTO t (k, x) VALUES (41, 0)")
        XCTAssertEqual(db.lastInsertRowID, 41)
        try db.execute("INSERT INTO t (x) VALUES (0)")
        XCTAssertEqual(db.lastInsertRowID, 42)
        try db.execute("UPDATE t SET x = 1")
        XCTAssertEqual(db.changes, 2)
        XCTAssertEqual(try db.userVersion, 0)
        try db.setUserVersion(7)
        XCTAssertEqual(try db.userVersion, 7)
        db.close()
        XCTAssertFalse(db.isOpen)
        XCTAssertThrowsError(try db.query("SELECT 1")) { XCTAssertEqual(($0 as? DatabaseError)?.code, ResultCode.misuse) }
        let again = try Database(path: directory.path("facts.db"), readOnly: true)
        XCTAssertEqual(try again.userVersion, 7)
        XCTAssertThrowsError(try again.execute("DELETE FROM t")) { XCTAssertEqual(($0 as? DatabaseError)?.code, ResultCode.readOnly) }
    }

    func testNewFileIsCreatedOwnerOnly() throws {
        let path = directory.path("modes.db")
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t (x)")
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        XCTAssertEqual(mode, 0o600)
    }

    func testReadOnlyOpenOfMissingFileFailsWithoutCreatingIt() throws {
        let path = directory.path("absent.db")
        XCTAssertThrowsError(try Database(path: path, readOnly: true)) { error in
            XCTAssertEqual((error as? DatabaseError)?.code, ResultCode.cantOpen)
            XCTAssertTrue("\(error)".contains(path))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    func testFileThatIsNotADatabaseThrowsAndIsLeftUntouched() throws {
        for (name, bytes) in [
            ("random.db", (0..<8192).map { _ in UInt8.random(in: 0...255) }),
            ("text.db", Array("hello, this is a note and not a database\n".utf8)),
            ("header-only.db", Array("SQLite format 3\0".utf8) + [UInt8](repeating: 0xAB, count: 1000)),
        ] {
            let path = directory.path(name)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            for readOnly in [false, true] {
                XCTAssertThrowsError(try Database(path: path, readOnly: readOnly), name) { error in
                    guard let e = error as? DatabaseError else { return XCTFail("\(error)") }
                    XCTAssertTrue(e.isUnreadableFile, "\(name): \(e)")
                    XCTAssertTrue(e.description.contains(path))
                }
            }
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data(bytes), "\(name) was modified")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(name + "-") }
            XCTAssertEqual(leftovers, [], "no journal files left beside \(name)")
        }
    }

    func testTwoConnectionsWaitForEachOtherInsteadOfFailing() throws {
        let path = directory.path("shared.db")
        let a = try Database(path: path)
        let b = try Database(path: path, busyTimeoutMilliseconds: 50)
        try a.execute("CREATE TABLE t (x)")
        try a.execute("BEGIN IMMEDIATE")
        // With the lock held, b gives up only after its timeout, with SQLITE_BUSY.
        XCTAssertThrowsError(try b.execute("BEGIN IMMEDIATE")) { XCTAssertEqual(($0 as? DatabaseError)?.code, ResultCode.busy) }
        try a.execute("COMMIT")
        try b.transaction { try b.execute("INSERT INTO t VALUES (1)") }
        XCTAssertEqual(try a.queryOne("SELECT count(*) FROM t")?.int64(at: 0), 1)
    }
}
