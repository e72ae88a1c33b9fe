import XCTest
@testable import RChatSQL

final class ValueTests: XCTestCase {
    private var db: Database!

    override func setUpWithError() throws {
        db = try Database(path: ":memory:")
        try db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v ANY)")
    }

    override func tearDown() { db.close() }

    private func roundTrip(_ value: SQLValue, file: StaticString = #filePath, line: UInt = #line) throws {
        try db.execute("DELETE FROM t")
        try db.execute("INSERT INTO t (v) VALUES (?)", [value])
        let row = try XCTUnwrap(db.queryOne("SELECT v FROM t"))
        XCTAssertEqual(row["v"], value, file: file, line: line)
        // The value comes back through a bound comparison too, not only by reading.
        let count = try db.queryOne("SELECT count(*) FROM t WHERE v IS ?", [value])?.int64(at: 0)
        XCTAssertEqual(count, 1, file: file, line: line)
    }

    func testEveryStorageClassRoundTrips() throws {
        try roundTrip(.null)
        try roundTrip(.integer(0))
        try roundTrip(.integer(Int64.max))
        try roundTrip(.integer(Int64.min))
        try roundTrip(.real(3.25))
        try roundTrip(.real(-0.5))
        try roundTrip(.text("plain"))
        try roundTrip(.text(""))
        try roundTrip(.blob([1, 2, 3]))
    }

    func testBlobsWithZeroBytesAndEmptyBlobs() throws {
        try roundTrip(.blob([0, 0, 0, 0]))
        try roundTrip(.blob([0, 255, 0, 1, 0]))
        try roundTrip(.blob(Array(repeating: 0, count: 4096)))
        // An empty blob is a blob, not NULL.
        try roundTrip(.blob([]))
        let row = try XCTUnwrap(db.queryOne("SELECT typeof(v) AS t, length(v) AS n FROM t"))
        XCTAssertEqual(try row.string("t"), "blob")
        XCTAssertEqual(try row.int64("n"), 0)
    }

    func testUnicodeTextAndEmbeddedNul() throws {
        try roundTrip(.text("Саша ✓ ⓥ 漢字 👩‍👩‍👧 é (e\u{301})"))
        try roundTrip(.text("before\u{0}after"))
        let row = try XCTUnwrap(db.queryOne("SELECT length(CAST(v AS BLOB)) AS n FROM t"))
        XCTAssertEqual(try row.int64("n"), 12)
        // The empty string stays a string, not NULL.
        try roundTrip(.text(""))
        XCTAssertEqual(try db.queryOne("SELECT typeof(v) FROM t")?.string(at: 0), "text")
    }

    func testLiteralsAndOptionalInitializers() {
        let values: [SQLValue] = [nil, 7, 2.5, "x", true, false]
        XCTAssertEqual(values, [.null, .integer(7), .real(2.5), .text("x"), .integer(1), .integer(0)])
        XCTAssertEqual(SQLValue(Optional<String>.none), .null)
        XCTAssertEqual(SQLValue(Optional<[UInt8]>.some([9])), .blob([9]))
        XCTAssertEqual(SQLValue(Optional<Int64>.some(3)), .integer(3))
        XCTAssertEqual(SQLValue(42), .integer(42))
        XCTAssertEqual(SQLValue.text("it's").description, "'it''s'")
        XCTAssertEqual(SQLValue.blob([0, 171]).description, "x'00ab'")
    }

    func testTypedAccessorsByNameAndIndex() throws {
        let row = try XCTUnwrap(db.queryOne(
            "SELECT 5 AS i, 1.5 AS r, 'é' AS s, x'00ff' AS b, NULL AS n, 1 AS flag"))
        XCTAssertEqual(try row.int64("i"), 5)
        XCTAssertEqual(try row.int("i"), 5)
        XCTAssertEqual(try row.double("r"), 1.5)
        XCTAssertEqual(try row.double("i"), 5.0)
        XCTAssertEqual(try row.string("s"), "é")
        XCTAssertEqual(try row.blob("b"), [0, 255])
        XCTAssertTrue(try row.bool("flag"))
        XCTAssertNil(try row.optionalInt64("n"))
        XCTAssertNil(try row.optionalString("n"))
        XCTAssertNil(try row.optionalBlob("n"))
        XCTAssertNil(try row.optionalDouble("n"))
        XCTAssertEqual(try row.optionalInt64("i"), 5)
        XCTAssertEqual(try row.int64(at: 0), 5)
        XCTAssertEqual(try row.string(at: 2), "é")
        XCTAssertEqual(try row.blob(at: 3), [0, 255])
        XCTAssertNil(try row.optionalBlob(at: 4))
        XCTAssertEqual(try row.int64("I"), 5, "column names match case-insensitively, as in SQL")
        XCTAssertEqual(row.columns, ["i", "r", "s", "b", "n", "flag"])
    }

    func testAccessorMismatchThrowsInsteadOfTrapping() throws {
        let row = try XCTUnwrap(db.queryOne("SELECT 'text' AS s, NULL AS n"))
        XCTAssertThrowsError(try row.int64("s")) { error in
            let e = error as? DatabaseError
            XCTAssertEqual(e?.code, ResultCode.mismatch)
            XCTAssertEqual(e?.sql, "SELECT 'text' AS s, NULL AS n")
            XCTAssertTrue(e?.message.contains("column s holds TEXT, expected INTEGER") ?? false, "\(error)")
        }
        XCTAssertThrowsError(try row.string("n"))
        XCTAssertThrowsError(try row.string("missing")) { XCTAssertEqual(($0 as? DatabaseError)?.code, ResultCode.range) }
        XCTAssertThrowsError(try row.string(at: 9)) { XCTAssertEqual(($0 as? DatabaseError)?.code, ResultCode.range) }
    }
}
