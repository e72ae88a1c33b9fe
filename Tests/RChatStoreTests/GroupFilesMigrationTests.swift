import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// A store of schema version 16 opened by this code (step 17, `SchemaGroupFiles`): what the
/// relay took of a file being sent moves from its attachment row to its delivery's
/// (`attachment_sends`), and reads back the same; an incoming file is untouched; a message
/// deleted takes its deliveries' progress with it; groups can be muted and blocked.
final class GroupFilesMigrationTests: MigrationTestCase {
    static let before = Array(Migrations.all.prefix { $0.sql != SchemaGroupFiles.sql })

    /// A message as the code of schema 16 wrote one.
    private func message(_ db: Database, _ sam: ContactID, _ n: Int64, _ direction: Direction) throws -> MessageRowID {
        try db.execute("""
            INSERT INTO messages (conversation_id, author_id, id, direction, content, created_at, position) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [.integer(sam.rawValue), direction == .incoming ? .integer(sam.rawValue) : .null, .blob(MessageID(high: 9, low: UInt64(n)).bytes),
                  .text(direction.rawValue), .blob(MessageContent.text("file \(n)").encoded()), .integer(1_000 + n), .integer(n)])
        let row = MessageRowID(db.lastInsertRowID)
        if direction == .outgoing {
            try db.execute("INSERT INTO message_status (message_rowid, member_id, status) VALUES (?, ?, 'Sending')",
                           [.integer(row.rawValue), .integer(sam.rawValue)])
        }
        return row
    }

    func testAFileBeingSentKeepsWhatTheRelayTookAsItsDeliverysProgress() throws {
        let old = try Store(path: path, migrations: Self.before)
        XCTAssertEqual(try old.database.userVersion, 16)
        let sam = try StoreTestCase.addContactAsBefore(old, StoreTestCase.newContact("Sam"), at: 1_000)
        let outgoing = try message(old.database, sam, 1, .outgoing), incoming = try message(old.database, sam, 2, .incoming)
        var taken = ChunkSet(count: 9)
        for i in [0, 1, 2, 5] { taken.insert(i) }
        try old.database.execute("""
            INSERT INTO attachments (message_rowid, direction, chunk_count, chunks, item_taken, file, stream_header, stream_state, waiting)
            VALUES (?, 'out', 9, ?, 1, 'files/sent/a', zeroblob(24), x'09', 'room')
            """, [.integer(outgoing.rawValue), .blob(taken.encoded)])
        var stored = ChunkSet(count: 4)
        stored.insert(0)
        try old.database.execute("""
            INSERT INTO attachments (message_rowid, direction, chunk_count, chunks, next_chunk, work_file) VALUES (?, 'in', 4, ?, 1, 'w')
            """, [.integer(incoming.rawValue), .blob(stored.encoded)])
        // As that code's writes left it: its messages in the search index.
        try old.database.execute("INSERT INTO message_search (message_search) VALUES ('rebuild')")
        old.close()

        let store = try Store(path: path)
        defer { store.close() }
        XCTAssertEqual(try store.database.userVersion, Store.schemaVersion)
        let delivery = DeliveryKey(message: outgoing, member: sam)
        let sent = try XCTUnwrap(try store.attachment(delivery: delivery))
        XCTAssertEqual(sent.chunks, taken)
        XCTAssertTrue(sent.itemTaken)
        XCTAssertEqual(sent.waiting, .room)
        XCTAssertEqual(sent.member, sam)
        XCTAssertEqual(sent.sentCopy, "files/sent/a")
        XCTAssertEqual(try store.attachment(message: outgoing), sent, "a direct conversation's file shows its one delivery")
        XCTAssertEqual(try store.database.queryOne("SELECT length(chunks) + item_taken FROM attachments WHERE message_rowid = ?",
                                                   [.integer(outgoing.rawValue)])?.int64(at: 0), 0, "no longer kept on the shared row")
        let received = try XCTUnwrap(try store.attachment(message: incoming))
        XCTAssertEqual(received.chunks, stored)
        XCTAssertEqual(received.nextChunk, 1)
        XCTAssertNil(received.member)
        XCTAssertNil(try store.attachment(delivery: DeliveryKey(message: incoming, member: sam)), "an incoming file has no delivery")

        try store.database.execute("DELETE FROM messages WHERE rowid = ?", [.integer(outgoing.rawValue)])
        XCTAssertEqual(try store.database.queryOne("SELECT count(*) FROM attachment_sends")?.int64(at: 0), 0, "gone with its message")
        XCTAssertNoThrow(try store.database.query("SELECT muted, blocked FROM groups"))
    }
}
