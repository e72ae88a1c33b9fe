import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// A store written by the schema before message content (its messages carried `text`),
/// filled the way that code filled it, opened by this code: every message, status,
/// timeline, outbox entry, receipt owed, system row, alert and undecryptable id is found
/// again, each text as `.text`.
final class MigrationTests: MigrationTestCase {

    /// What the fixture holds, to be found again.
    struct Expected {
        var messages: [MessageID: (text: String, direction: Direction, status: MessageStatus?, position: Int64)] = [:]
        var timelines: [MessageID: [MessageStatus]] = [:]
        var outbox: [MessageID: (attempts: Int, nextAttemptAt: Int64, session: [UInt8]?)] = [:]
        var conversation: [String] = []
    }

    /// The order statuses are reached in, from Sending.
    static let reached: [MessageStatus: [MessageStatus]] = [
        .sending: [.sending], .sent: [.sending, .sent], .delivered: [.sending, .sent, .delivered],
        .read: [.sending, .sent, .delivered, .read], .notDelivered: [.sending, .sent, .notDelivered],
        .notConfirmed: [.sending, .notConfirmed], .failedToSend: [.sending, .failedToSend],
    ]

    /// The steps before the one that moved messages to content.
    static let stepsBefore = Array(Migrations.all.prefix { $0.sql != SchemaV6.sql })

    /// Builds the fixture with the migrations before content and the statements that
    /// code ran (its messages table had `text`).
    func writeStoreBeforeContent() throws -> (Expected, sam: ContactID, alex: ContactID) {
        XCTAssertEqual(Migrations.all[Self.stepsBefore.count].sql, SchemaV6.sql, "the content step follows them")
        let old = try Store(path: path, migrations: Self.stepsBefore)
        defer { old.close() }
        XCTAssertEqual(try old.database.userVersion, Self.stepsBefore.count)
        XCTAssertNotNil(try old.database.queryOne("SELECT 1 FROM pragma_table_info('messages') WHERE name = 'text'"))
        let sam = try StoreTestCase.addContactAsBefore(old, StoreTestCase.newContact("Sam"), at: 1_000)
        let alex = try StoreTestCase.addContactAsBefore(old, StoreTestCase.newContact("Alex", key: 9), at: 1_000)
        var expected = Expected()
        var position: Int64 = 0
        func outgoing(_ text: String, _ status: MessageStatus, queued: (attempts: Int, session: [UInt8]?)? = nil,
                      resent: Bool = false, autoResentAt: Int64? = nil) throws {
            position += 1
            let id = MessageID.random()
            try old.database.execute("""
                INSERT INTO messages (contact_id, id, direction, text, created_at, seq, keys_fingerprint, position, resent, auto_resent_at)
                VALUES (?, ?, 'out', ?, ?, ?, ?, ?, ?, ?)
                """, [.integer(sam.rawValue), .blob(id.bytes), .text(text), .integer(2_000 + position), .integer(position),
                      .blob([7, 7]), .integer(position), .integer(resent ? 1 : 0), SQLValue(autoResentAt)])
            let row = old.database.lastInsertRowID
            try old.database.execute("INSERT INTO message_status (message_rowid, status) VALUES (?, ?)", [.integer(row), .text(status.rawValue)])
            for (n, step) in Self.reached[status]!.enumerated() {
                try old.database.execute("INSERT INTO status_log (message_rowid, status, at) VALUES (?, ?, ?)",
                                         [.integer(row), .text(step.rawValue), .integer(2_000 + position + Int64(n))])
            }
            if let queued {
                try old.database.execute("INSERT INTO outbox (message_rowid, attempts, next_attempt_at, sent_in_session) VALUES (?, ?, ?, ?)",
                                         [.integer(row), SQLValue(queued.attempts), .integer(3_000 + position), SQLValue(queued.session)])
                expected.outbox[id] = (queued.attempts, 3_000 + position, queued.session)
            }
            expected.messages[id] = (text, .outgoing, status, position)
            expected.timelines[id] = Self.reached[status]!
            expected.conversation.append(text)
        }
        func incoming(_ text: String, contact: ContactID, read: Bool) throws -> MessageID {
            position += 1
            let id = MessageID.random()
            try old.database.execute("""
                INSERT INTO messages (rowid, contact_id, id, direction, text, created_at, received_at, read_at, seq, position)
                VALUES ((SELECT coalesce(max(rowid), 0) + 1 FROM messages), ?, ?, 'in', ?, ?, ?, ?, ?, ?)
                """, [.integer(contact.rawValue), .blob(id.bytes), .text(text), .integer(2_500 + position), .integer(2_600 + position),
                      read ? .integer(2_700 + position) : .null, .integer(position), .integer(position)])
            try old.database.execute("UPDATE contacts SET last_incoming_position = ? WHERE id = ?", [.integer(position), .integer(contact.rawValue)])
            expected.messages[id] = (text, .incoming, nil, position)
            if contact == sam { expected.conversation.append(text) }
            return id
        }
        func row(_ text: String, action: SystemRow.Action?, ids: [MessageID]) throws {
            position += 1
            try old.database.execute("""
                INSERT INTO system_rows (contact_id, kind, text, action, message_ids, created_at, position) VALUES (?, 'note', ?, ?, ?, ?, ?)
                """, [.integer(sam.rawValue), .text(text), SQLValue(action?.rawValue), .blob(ids.flatMap(\.bytes)),
                      .integer(2_900 + position), .integer(position)])
            expected.conversation.append("[\(text)]")
        }

        try outgoing("still sending, never tried", .sending, queued: (0, nil))
        try outgoing("sending, tried in a session", .sending, queued: (2, [UInt8](repeating: 5, count: 16)))
        try outgoing("sent ✓", .sent)
        try outgoing("delivered ⓥ", .delivered)
        let read = try incoming("a reply, read", contact: sam, read: true)
        try outgoing("read\nover two lines", .read)
        try outgoing("not delivered", .notDelivered, resent: true)
        try row("1 message couldn't be read on Sam's phone.", action: .resend, ids: Array(expected.messages.keys.prefix(1)))
        try outgoing("not confirmed", .notConfirmed, queued: (1, [UInt8](repeating: 6, count: 16)))
        try outgoing("failed to send", .failedToSend)
        try outgoing("resent by itself", .sent, resent: true, autoResentAt: 2_222)
        let unread = try incoming("unread, with emoji 🙂 and 'quotes'", contact: sam, read: false)
        let other = try incoming("from Alex", contact: alex, read: false)
        try row("Sam is using a new device. Enter their code again to verify it.", action: nil, ids: [])
        let empty = try incoming("", contact: sam, read: false)

        // Receipts: Delivered settled through the read reply; a Read receipt owed for it.
        try old.database.execute("UPDATE contacts SET delivered_receipted_through = ? WHERE id = ?",
                                 [.integer(expected.messages[read]!.position), .integer(sam.rawValue)])
        // As the rChat of that schema owed it (today's store also looks at attachments).
        try old.database.execute("UPDATE messages SET read_owed = 1 WHERE contact_id = ? AND id = ?", [.integer(sam.rawValue), .blob(read.bytes)])
        let unreadRow = MessageRowID(try XCTUnwrap(old.database.queryOne("SELECT rowid FROM messages WHERE id = ?", [.blob(unread.bytes)])).int64(at: 0))
        try old.database.execute("""
            INSERT INTO alerts (contact_id, message_rowid, kind, title, text, created_at) VALUES (?, ?, 'message', 'Sam', 'unread', 2800)
            """, [.integer(sam.rawValue), .integer(unreadRow.rawValue)])
        try old.database.execute("INSERT INTO undecryptable (contact_id, id, received_at) VALUES (?, ?, 2850)",
                                 [.integer(alex.rawValue), .blob(MessageID(high: 1, low: 2).bytes)])
        _ = (other, empty)
        return (expected, sam, alex)
    }

    func testAStoreFromBeforeContentOpensWithEveryMessageStatusAndRow() throws {
        let (expected, sam, alex) = try writeStoreBeforeContent()
        let store = try Store(path: path)
        defer { store.close() }
        XCTAssertEqual(try store.database.userVersion, Store.schemaVersion)
        XCTAssertEqual(Store.schemaVersion, Migrations.all.count)
        XCTAssertNil(try store.database.queryOne("SELECT 1 FROM pragma_table_info('messages') WHERE name = 'text'"))
        XCTAssertEqual(try store.database.queryOne("PRAGMA foreign_keys")?.int64(at: 0), 1, "foreign keys are on again")
        XCTAssertNil(try store.database.queryOne("PRAGMA foreign_key_check"))

        XCTAssertEqual(try store.database.queryOne("SELECT count(*) FROM messages")?.int64(at: 0), Int64(expected.messages.count))
        for (id, want) in expected.messages {
            let contact = want.text == "from Alex" ? alex : sam
            let m = try XCTUnwrap(store.message(contact: contact, id: id), want.text)
            XCTAssertEqual(m.content, .text(want.text))
            XCTAssertEqual(m.direction, want.direction, want.text)
            XCTAssertEqual(m.status, want.status, want.text)
            XCTAssertEqual(m.position, want.position, want.text)
            if let timeline = expected.timelines[id] {
                XCTAssertEqual(try store.statusLog(message: m.rowID).map(\.status), timeline, want.text)
                XCTAssertEqual(m.keysFingerprint, [7, 7])
                XCTAssertEqual(m.seq, want.position)
            }
        }
        let resent = try XCTUnwrap(expected.messages.first { $0.value.text == "resent by itself" }?.key)
        XCTAssertEqual(try store.message(contact: sam, id: resent)?.autoResentAt, 2_222)
        XCTAssertEqual(try store.message(contact: sam, id: resent)?.isResent, true)

        // The outbox: the same rows, attempts and sessions, with their content.
        let queued = try store.outbox(contact: sam)
        XCTAssertEqual(Set(queued.map(\.id)), Set(expected.outbox.keys))
        for item in queued {
            let want = try XCTUnwrap(expected.outbox[item.id])
            XCTAssertEqual(item.attempts, want.attempts)
            XCTAssertEqual(item.nextAttemptAt, want.nextAttemptAt)
            XCTAssertEqual(item.sentInSession, want.session)
            XCTAssertEqual(item.content, .text(expected.messages[item.id]!.text))
            XCTAssertEqual(item.encodedContent, item.content.encoded())
        }

        // The conversation reads as before, messages and rows interleaved.
        let items = try store.conversation(contact: sam, limit: 100)
        XCTAssertEqual(items.map { item -> String in
            switch item {
            case .message(let m): return m.content.displayText(direction: m.direction)
            case .row(let r): return "[\(r.text)]"
            }
        }, expected.conversation)
        if case .row(let row) = items.first(where: { if case .row = $0 { return true } else { return false } }) {
            XCTAssertEqual(row.action, .resend)
            XCTAssertEqual(row.messageIDs.count, 1)
        } else {
            XCTFail("the Resend row is missing")
        }

        // Receipts owed, unread counts, alerts and undecryptable ids.
        let read = try XCTUnwrap(expected.messages.first { $0.value.text == "a reply, read" }?.key)
        XCTAssertEqual(try store.deliveredReceiptedThrough(contact: sam), expected.messages[read]!.position)
        XCTAssertEqual(try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 10).map(\.id).count, 2, "the two unread after it")
        XCTAssertEqual(try store.readReceiptsOwed(contact: sam, limit: 10), [read])
        XCTAssertEqual(try store.unreadCount(contact: sam), 2)
        XCTAssertEqual(try store.unreadCount(contact: alex), 1)
        let unread = try XCTUnwrap(store.message(contact: sam, id: try XCTUnwrap(expected.messages.first { $0.value.text.hasPrefix("unread") }?.key)))
        XCTAssertTrue(try store.hasAlert(message: unread.rowID, kind: "message"), "the alert still points at its message")
        XCTAssertEqual(try store.undecryptable(contact: alex).map(\.id), [MessageID(high: 1, low: 2)])

        // The backstops hold on the new table: content never changes, Delivered never goes back.
        XCTAssertThrowsError(try store.database.execute("UPDATE messages SET content = x'0178' WHERE rowid = ?", [.integer(unread.rowID.rawValue)]))
        let delivered = try XCTUnwrap(expected.messages.first { $0.value.text == "delivered ⓥ" }?.key)
        let deliveredRow = try XCTUnwrap(store.message(contact: sam, id: delivered)).rowID
        XCTAssertThrowsError(try store.database.execute("UPDATE message_status SET status = 'Sent' WHERE message_rowid = ?",
                                                        [.integer(deliveredRow.rawValue)]))
        // And new messages go on from where the old ones stopped.
        let next = try store.insertOutgoing(contact: sam, id: .random(), content: .text("after the move"), at: 4_000)
        XCTAssertEqual(try store.message(next)?.position, expected.messages.values.map(\.position).max()! + 1)
    }

    func testTheMovedTableIsTheOneAFreshStoreHas() throws {
        _ = try writeStoreBeforeContent()
        let moved = try Store(path: path)
        let schema = try moved.database.query("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").map(\.values)
        moved.close()
        let fresh = try Store(path: home.appendingPathComponent("fresh.db").path)
        defer { fresh.close() }
        XCTAssertEqual(try fresh.database.query("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").map(\.values), schema)
    }

    func testContentOutsideTheLayoutIsRefusedByTheTable() throws {
        let store = try Store(path: path)
        defer { store.close() }
        let sam = try store.addContact(StoreTestCase.newContact("Sam"), at: 1).id
        for bad: [UInt8] in [[], [1] + [UInt8](repeating: 0x61, count: MessageContent.maximumTextBytes + 1),
                             [9] + [UInt8](repeating: 0, count: MessageContent.maximumTextBytes + 1)] {
            XCTAssertThrowsError(try store.database.execute("""
                INSERT INTO messages (conversation_id, author_id, id, direction, content, created_at, position) VALUES (?1, ?1, ?2, 'in', ?3, 1, 1)
                """, [.integer(sam.rawValue), .blob(MessageID.random().bytes), .blob(bad)]), "\(bad.prefix(4))")
        }
        XCTAssertThrowsError(try store.database.execute("""
            INSERT INTO messages (conversation_id, author_id, id, direction, content, created_at, position) VALUES (?1, ?1, ?2, 'in', 'hello', 1, 1)
            """, [.integer(sam.rawValue), .blob(MessageID.random().bytes)]), "text in place of a blob (STRICT)")
        // A row that passes the table's checks but not the layout is reported with its cause.
        try store.database.execute("""
            INSERT INTO messages (conversation_id, author_id, id, direction, content, created_at, position) VALUES (?1, ?1, ?2, 'in', ?3, 1, 1)
            """,
                                   [.integer(sam.rawValue), .blob(MessageID(high: 0, low: 9).bytes), .blob([2, 1])])
        XCTAssertThrowsError(try store.message(contact: sam, id: MessageID(high: 0, low: 9))) { error in
            XCTAssertEqual(error as? StoreError, .malformedContent(table: "messages", column: "content", .truncated(field: "name length")))
        }
        // Any kind byte is taken: what a later version wrote is kept whole and read back as it came.
        try store.database.execute("""
            INSERT INTO messages (conversation_id, author_id, id, direction, content, created_at, position) VALUES (?1, ?1, ?2, 'in', ?3, 1, 2)
            """, [.integer(sam.rawValue), .blob(MessageID(high: 0, low: 10).bytes), .blob([6, 1])])
        XCTAssertEqual(try store.message(contact: sam, id: MessageID(high: 0, low: 10))?.content, .newer(.content([6, 1])))
    }
}
