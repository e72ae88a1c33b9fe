import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// A store of schema version 13 (chunks as bitmaps) opened by this code: each bitmap is the
/// same chunks as ranges, every other column is kept, the trigger that removes an
/// attachment with its message still works, and a bitmap that does not fit stops the step.
final class ChunkRangesMigrationTests: MigrationTestCase {
    static let before = Array(Migrations.all.prefix { $0.sql != SchemaChunkRanges.sql })

    /// As the code of that schema stored it (its messages had `contact_id`).
    func message(_ store: Store, _ contact: ContactID, _ n: UInt64, _ direction: Direction = .incoming) throws -> MessageRowID {
        try StoreTestCase.insertAsBefore(store.database, contact: contact, id: MessageID(high: 7, low: n), direction, .text("file \(n)"),
                                         at: 1_000 + Int64(n), position: Int64(n))
    }

    func testBitmapsBecomeRanges() throws {
        let old = try Store(path: path, migrations: Self.before)
        XCTAssertEqual(try old.database.userVersion, 13)
        let sam = try StoreTestCase.addContactAsBefore(old, StoreTestCase.newContact("Sam"), at: 1_000)
        let incoming = try message(old, sam, 1), outgoing = try message(old, sam, 2, .outgoing), none = try message(old, sam, 3)
        try old.database.execute("""
            INSERT INTO attachments (message_rowid, direction, chunk_count, chunks, next_chunk, work_file, hash_state)
            VALUES (?, 'in', 20, ?, 3, 'files/partial/1-x.part', x'0102')
            """, [.integer(incoming.rawValue), .blob([0b0000_0111, 0b1000_0001, 0b0000_1000])])
        try old.database.execute("""
            INSERT INTO attachments (message_rowid, direction, chunk_count, chunks, item_taken, file, stream_header, stream_state, waiting)
            VALUES (?, 'out', 9, ?, 1, 'files/sent/a', zeroblob(24), x'09', 'room')
            """, [.integer(outgoing.rawValue), .blob([0xFF, 0x01])])
        try old.database.execute("""
            INSERT INTO attachments (message_rowid, direction, chunk_count, chunks, work_file) VALUES (?, 'in', 1 << 24, zeroblob(2097152), 'w')
            """, [.integer(none.rawValue)])
        old.close()

        let store = try Store(path: path)
        defer { store.close() }
        XCTAssertEqual(try store.database.userVersion, Store.schemaVersion)
        let a = try XCTUnwrap(try store.attachment(message: incoming))
        XCTAssertEqual(a.chunks.done.ranges, [0..<3, 8..<9, 15..<16, 19..<20])
        XCTAssertEqual(a.chunks.count, 20)
        XCTAssertEqual(a.nextChunk, 3)
        XCTAssertEqual(a.hashState, [1, 2])
        XCTAssertEqual(a.workFile, "files/partial/1-x.part")
        let b = try XCTUnwrap(try store.attachment(message: outgoing))
        XCTAssertTrue(b.chunks.isComplete)
        XCTAssertEqual(b.chunks.encoded, [0, 0, 0, 0, 0, 0, 0, 9])
        XCTAssertTrue(b.itemTaken)
        XCTAssertEqual(b.sentCopy, "files/sent/a")
        XCTAssertEqual(b.waiting, .room)
        let c = try XCTUnwrap(try store.attachment(message: none))
        XCTAssertEqual(c.chunks.doneCount, 0)
        XCTAssertEqual(try store.database.queryOne("SELECT length(chunks) FROM attachments WHERE message_rowid = ?",
                                                   [.integer(none.rawValue)])?.int64(at: 0), 0, "a 2 MiB bitmap of nothing is nothing")
        XCTAssertEqual(try store.database.queryOne("PRAGMA foreign_keys")?.int64(at: 0), 1)
        XCTAssertNotNil(try store.database.queryOne("SELECT 1 FROM sqlite_master WHERE name = 'attachments_delivered_owed'"))
        try store.database.execute("DELETE FROM messages WHERE rowid = ?", [.integer(incoming.rawValue)])
        XCTAssertNil(try store.attachment(message: incoming), "the trigger still removes it with its message")
    }

    func testABitmapThatDoesNotFitStopsTheStep() throws {
        let old = try Store(path: path, migrations: Self.before)
        let sam = try StoreTestCase.addContactAsBefore(old, StoreTestCase.newContact("Sam"), at: 1_000)
        let row = try message(old, sam, 1)
        try old.database.execute("INSERT INTO attachments (message_rowid, direction, chunk_count, chunks, work_file) VALUES (?, 'in', 3, ?, 'w')",
                                 [.integer(row.rawValue), .blob([0b1000_0000])])
        old.close()
        XCTAssertThrowsError(try Store(path: path))
        let again = try Store(path: path, migrations: Self.before)
        defer { again.close() }
        XCTAssertEqual(try again.database.userVersion, 13, "left at a whole version")
    }
}
