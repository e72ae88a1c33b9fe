import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// Schema step 15 (`SchemaConversations`): a store written by the steps before it — every
/// status with its timeline, queued messages, receipts owed, system rows, a draft, alerts, a
/// timer, attachments, search entries, undecryptable ids, expired ids — opened by this code:
/// each is found again through the store's API and the view's queries, in its conversation,
/// and every message's status is its one delivery's. A step that fails leaves the file as it was.
extension MigrationTests {
    /// The steps before conversations.
    static let stepsBeforeConversations = Array(Migrations.all.prefix { $0.sql != SchemaConversations.sql })

    struct BeforeConversations {
        var sam: ContactID
        var alex: ContactID
        var outgoing: [MessageID: (text: String, status: MessageStatus, row: Int64)] = [:]
        var incoming: [MessageID: (text: String, author: ContactID, row: Int64)] = [:]
        var conversation: [String] = []
        var read = MessageID.random()
        var expiredIncoming = MessageID.random()
        var timerSetBy = MessageID(high: 3, low: 4)
        var incomingFile: Int64 = 0
        var outgoingFile: Int64 = 0
        var resent = MessageID.random()
        var queuedInSession = MessageID.random()
        var offered: [MessageID] = []
    }

    /// Writes the fixture as the code of step 14 wrote it: rows keyed by contact.
    func writeStoreBeforeConversations() throws -> BeforeConversations {
        XCTAssertEqual(Self.stepsBeforeConversations.count, 14)
        let old = try Store(path: path, migrations: Self.stepsBeforeConversations)
        defer { old.close() }
        let db = old.database
        let sam = try StoreTestCase.addContactAsBefore(old, StoreTestCase.newContact("Sam"), at: 1_000)
        let alex = try StoreTestCase.addContactAsBefore(old, StoreTestCase.newContact("Alex", key: 9), at: 1_000)
        var f = BeforeConversations(sam: sam, alex: alex)
        var position: Int64 = 0
        func index(_ row: Int64, _ content: MessageContent) throws {
            if case .text(let text) = content { try db.execute("INSERT INTO message_search (rowid, text) VALUES (?, ?)", [.integer(row), .text(text)]) }
        }
        @discardableResult
        func outgoing(_ text: String, _ status: MessageStatus, id: MessageID = .random(), queued: (attempts: Int, session: [UInt8]?)? = nil,
                      autoResentAt: Int64? = nil, content: MessageContent? = nil) throws -> Int64 {
            position += 1
            let content = content ?? .text(text)
            try db.execute("""
                INSERT INTO messages (contact_id, id, direction, content, created_at, seq, keys_fingerprint, position, resent, auto_resent_at,
                                      expires_after)
                VALUES (?, ?, 'out', ?, ?, ?, x'0707', ?, ?, ?, 3600)
                """, [.integer(sam.rawValue), .blob(id.bytes), .blob(content.encoded()), .integer(2_000 + position), .integer(position),
                      .integer(position), .integer(autoResentAt == nil ? 0 : 1), SQLValue(autoResentAt)])
            let row = db.lastInsertRowID
            try index(row, content)
            try db.execute("INSERT INTO message_status (message_rowid, status) VALUES (?, ?)", [.integer(row), .text(status.rawValue)])
            for (n, step) in Self.reached[status]!.enumerated() {
                try db.execute("INSERT INTO status_log (message_rowid, status, at) VALUES (?, ?, ?)",
                               [.integer(row), .text(step.rawValue), .integer(2_000 + position + Int64(n))])
            }
            if let queued {
                try db.execute("""
                    INSERT INTO outbox (message_rowid, attempts, next_attempt_at, sent_in_session, asked_at_position) VALUES (?, ?, ?, ?, ?)
                    """, [.integer(row), SQLValue(queued.attempts), .integer(3_000 + position), SQLValue(queued.session),
                          autoResentAt == nil ? .integer(position) : .null])
            }
            f.outgoing[id] = (text, status, row)
            f.conversation.append(text)
            return row
        }
        @discardableResult
        func incoming(_ text: String, from contact: ContactID, id: MessageID = .random(), read: Bool,
                      content: MessageContent? = nil) throws -> Int64 {
            // Alex's conversation has its own places.
            let place: Int64
            if contact == sam { position += 1; place = position } else { place = 1 }
            let content = content ?? .text(text)
            try db.execute("""
                INSERT INTO messages (contact_id, id, direction, content, created_at, received_at, read_at, seq, position)
                VALUES (?, ?, 'in', ?, ?, ?, ?, ?, ?)
                """, [.integer(contact.rawValue), .blob(id.bytes), .blob(content.encoded()), .integer(2_500 + place),
                      .integer(2_600 + place), read ? .integer(2_700 + place) : .null, .integer(place), .integer(place)])
            let row = db.lastInsertRowID
            try index(row, content)
            try db.execute("UPDATE contacts SET last_incoming_position = ? WHERE id = ?", [.integer(place), .integer(contact.rawValue)])
            f.incoming[id] = (text, contact, row)
            if contact == sam { f.conversation.append(text) }
            return row
        }
        func row(_ text: String, action: SystemRow.Action?, ids: [MessageID]) throws {
            position += 1
            try db.execute("""
                INSERT INTO system_rows (contact_id, kind, text, action, message_ids, created_at, position) VALUES (?, 'could-not-be-read', ?, ?, ?, ?, ?)
                """, [.integer(sam.rawValue), .text(text), SQLValue(action?.rawValue), .blob(ids.flatMap(\.bytes)),
                      .integer(2_900 + position), .integer(position)])
            f.conversation.append("[\(text)]")
        }

        try outgoing("still sending, never tried", .sending, queued: (0, nil))
        try outgoing("sending, tried in a session", .sending, id: f.queuedInSession, queued: (2, [UInt8](repeating: 5, count: 16)))
        try outgoing("sent ✓", .sent)
        try outgoing("delivered ⓥ", .delivered)
        try incoming("a reply, read", from: sam, id: f.read, read: true)
        try outgoing("read, over two lines", .read)
        let notDelivered = MessageID.random()
        try outgoing("not delivered", .notDelivered, id: notDelivered)
        f.offered = [notDelivered]
        try row("1 message couldn't be read on Sam's phone.", action: .resend, ids: f.offered)
        try outgoing("not confirmed", .notConfirmed, queued: (1, [UInt8](repeating: 6, count: 16)))
        try outgoing("failed to send", .failedToSend)
        try outgoing("resent by itself", .sending, id: f.resent, queued: (0, nil), autoResentAt: 2_222)
        let file = Attachment(kind: .photo, name: "beach.jpg", size: 3, contentHash: [UInt8](repeating: 1, count: 32),
                              key: [UInt8](repeating: 2, count: 32))
        f.incomingFile = try incoming("beach.jpg", from: sam, read: false, content: .attachment(file))
        f.outgoingFile = try outgoing("beach.jpg", .sent, content: .attachment(file))
        let unread = try incoming("unread, with a word: umbrella", from: sam, read: false)
        try incoming("from Alex, umbrella too", from: alex, read: false)
        // A received message that disappeared, its Read receipt still owed; its place is taken by no one.
        position += 1
        try db.execute("INSERT INTO expired_messages (contact_id, id, position, incoming, read_owed) VALUES (?, ?, ?, 1, 1)",
                       [.integer(sam.rawValue), .blob(f.expiredIncoming.bytes), .integer(position)])
        try db.execute("UPDATE contacts SET last_incoming_position = ? WHERE id = ?", [.integer(position), .integer(sam.rawValue)])

        // Receipts: Delivered settled through the read reply; a Read receipt owed for it.
        try db.execute("UPDATE contacts SET delivered_receipted_through = ? WHERE id = ?",
                       [.integer(5), .integer(sam.rawValue)])
        try db.execute("UPDATE messages SET read_owed = 1 WHERE id = ?", [.blob(f.read.bytes)])
        // Attachments, a timer, a draft, an alert, an unreadable id, a notice read, the sealed state.
        try db.execute("""
            INSERT INTO attachments (message_rowid, direction, chunk_count, chunks, next_chunk, work_file, hash_state)
            VALUES (?, 'in', 4, ?, 1, 'files/partial/beach.part', x'0102')
            """, [.integer(f.incomingFile), .blob({ var c = ChunkSet(count: 4); _ = c.insert(0); return c.encoded }())])
        try db.execute("""
            INSERT INTO attachments (message_rowid, direction, chunk_count, chunks, item_taken, file, stream_header, stream_state, waiting)
            VALUES (?, 'out', 4, x'', 1, 'files/sent/beach.jpg', zeroblob(24), x'09', 'room')
            """, [.integer(f.outgoingFile)])
        try db.execute("UPDATE contacts SET timer_seconds = 3600, timer_set_by = ?, timer_counter = 5 WHERE id = ?",
                       [.blob(f.timerSetBy.bytes), .integer(sam.rawValue)])
        try db.execute("UPDATE messages SET expires_at = 9000 WHERE id = ?", [.blob(f.read.bytes)])
        try db.execute("INSERT INTO drafts (contact_id, text, cursor, updated_at) VALUES (?, 'half a thought', 4, 2950)", [.integer(sam.rawValue)])
        try db.execute("""
            INSERT INTO alerts (contact_id, message_rowid, kind, title, text, created_at, notification_id)
            VALUES (?, ?, 'message', 'Sam', 'unread', 2800, 77)
            """, [.integer(sam.rawValue), .integer(unread)])
        try db.execute("INSERT INTO alerts (contact_id, message_rowid, kind, title, text, created_at) VALUES (NULL, NULL, 'summary', 'rChat', '5 new', 2801)")
        try db.execute("INSERT INTO undecryptable (contact_id, id, received_at, session) VALUES (?, ?, 2850, NULL)",
                       [.integer(alex.rawValue), .blob(MessageID(high: 1, low: 2).bytes)])
        try db.execute("INSERT INTO notices_read (contact_id, digest, read_at) VALUES (?, zeroblob(32), 2860)", [.integer(sam.rawValue)])
        try db.execute("INSERT INTO session_state (contact_id, sealed, updated_at) VALUES (?, x'0a0b', 2870)", [.integer(sam.rawValue)])
        return f
    }

    func testAStoreFromBeforeConversationsFindsEverythingInItsDirectConversation() throws {
        let f = try writeStoreBeforeConversations()
        let store = try Store(path: path)
        defer { store.close() }
        XCTAssertEqual(try store.database.userVersion, Store.schemaVersion)
        let (sam, alex) = (f.sam, f.alex)

        // The conversations: one direct conversation per contact, with its id and one member.
        for contact in [sam, alex] {
            let conversation = try XCTUnwrap(store.storedConversation(contact.conversation))
            XCTAssertEqual(conversation.kind, .direct)
            XCTAssertEqual(conversation.members, [ConversationMember(contact: contact, role: .member, state: .current)])
            XCTAssertEqual(conversation.createdAt, 1_000)
        }

        // Every outgoing message: its status, its timeline, its resend facts, from its one delivery.
        for (id, want) in f.outgoing {
            let m = try XCTUnwrap(store.message(contact: sam, id: id), want.text)
            XCTAssertEqual(m.rowID.rawValue, want.row, "\(want.text): rowid kept")
            XCTAssertEqual(m.status, want.status, want.text)
            XCTAssertNil(m.author, want.text)
            XCTAssertEqual(m.conversation, sam.conversation)
            XCTAssertEqual(m.keysFingerprint, [7, 7], want.text)
            XCTAssertEqual(try store.statusLog(message: m.rowID).map(\.status), Self.reached[want.status], want.text)
            let deliveries = try store.deliveries(message: m.rowID)
            XCTAssertEqual(deliveries.map(\.member), [sam], want.text)
            XCTAssertEqual(deliveries.first?.status, want.status)
            XCTAssertEqual(try store.deliverySummary(message: m.rowID), DeliverySummary([want.status]), want.text)
            XCTAssertEqual(try store.statusLog(DeliveryKey(message: m.rowID, member: sam)).map(\.status), Self.reached[want.status])
        }
        let resent = try XCTUnwrap(store.message(contact: sam, id: f.resent))
        XCTAssertEqual(resent.autoResentAt, 2_222)
        XCTAssertTrue(resent.isResent)
        XCTAssertEqual(try store.autoResentCount(contact: sam, since: 2_000), 1)
        XCTAssertEqual(try store.deliveries(message: resent.rowID).first?.autoResentAt, 2_222)

        // Every incoming message, with its author.
        for (id, want) in f.incoming {
            let m = try XCTUnwrap(store.message(contact: want.author, id: id), want.text)
            XCTAssertEqual(m.rowID.rawValue, want.row)
            XCTAssertEqual(m.author, want.author, want.text)
            XCTAssertNil(m.status)
            XCTAssertEqual(try store.deliveries(message: m.rowID), [])
        }

        // The queue: each entry with its attempts, session and origin.
        let queued = try store.outbox(contact: sam)
        XCTAssertEqual(queued.count, 4)
        XCTAssertTrue(queued.allSatisfy { $0.contact == sam && $0.conversation == sam.conversation })
        let inSession = try XCTUnwrap(queued.first { $0.id == f.queuedInSession })
        XCTAssertEqual(inSession.attempts, 2)
        XCTAssertEqual(inSession.sentInSession, [UInt8](repeating: 5, count: 16))
        XCTAssertEqual(inSession.origin, .byHand(askedAt: 2))
        XCTAssertEqual(queued.first { $0.id == f.resent }?.origin, .automatic)
        XCTAssertEqual(queued.first { $0.id == f.resent }?.expiresAfter, 3600)

        // The conversation as the view pages it, rows among messages, in order.
        let items = try store.conversation(contact: sam, limit: 100)
        XCTAssertEqual(items.map { item -> String in
            switch item {
            case .message(let m): if case .text(let t) = m.content { return t } else { return "beach.jpg" }
            case .row(let r): return "[\(r.text)]"
            }
        }, f.conversation)
        let total = try store.conversationLength(conversation: sam.conversation)
        XCTAssertEqual(total, f.conversation.count, "the items the view pages through: not the expired message's place")
        XCTAssertEqual(try store.conversation(contact: sam, limit: 1, skippingLatest: 0).first.map { item -> Bool in
            if case .message(let m) = item { return m.author == sam } else { return false }
        }, true)
        XCTAssertEqual(try store.lastActivity(conversation: sam.conversation), 2_900 + 8, "the row's time, the latest")
        XCTAssertEqual(try store.idsOfferedForResend(contact: sam), f.offered)
        let row = try XCTUnwrap(items.compactMap { if case .row(let r) = $0 { return r } else { return nil } }.first)
        XCTAssertEqual(row.member, sam)
        XCTAssertEqual(row.kind, .couldNotBeRead)
        XCTAssertEqual(row.action, .resend)

        // Receipts owed: Delivered after the mark (the expired one's included), Read for the read reply and the expired one.
        XCTAssertEqual(try store.deliveredReceiptedThrough(contact: sam), 5)
        XCTAssertEqual(try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 10).count, 3, "the file, the unread one, the expired one")
        XCTAssertEqual(try store.readReceiptsOwed(contact: sam, limit: 10), [f.read, f.expiredIncoming])
        XCTAssertEqual(Set(try store.contactsOwedReceipts()), [sam, alex])
        XCTAssertEqual(try store.unreadCount(contact: sam), 2)
        XCTAssertEqual(try store.unreadCount(contact: alex), 1)
        XCTAssertEqual(try store.expiredIDs(contact: sam, among: [f.expiredIncoming, f.read]), [f.expiredIncoming])

        // Timer, draft, alerts, attachments, search, undecryptable, notices, sealed state.
        let timer = try store.conversationTimer(contact: sam)
        XCTAssertEqual(timer.timer, .oneHour)
        XCTAssertEqual(timer.setBy, TimerPolicy.Change(counter: 5, id: f.timerSetBy))
        XCTAssertEqual(try store.conversationTimer(contact: alex).timer, .off)
        XCTAssertEqual(try store.expiresAt(contact: sam, id: f.read), 9000)
        XCTAssertEqual(try store.draft(contact: sam), Draft(text: "half a thought", cursor: 4))
        XCTAssertNil(try store.draft(contact: alex))
        let alerts = try store.alerts(since: 0)
        XCTAssertEqual(alerts.map(\.kind), ["message", "summary"])
        XCTAssertEqual(alerts.first?.contact, sam)
        XCTAssertNil(alerts.last?.contact)
        let unread = try XCTUnwrap(f.incoming.first { $0.value.text.hasPrefix("unread") })
        XCTAssertEqual(alerts.first?.message, MessageRowID(unread.value.row))
        XCTAssertTrue(try store.hasAlert(message: MessageRowID(unread.value.row), kind: "message"))
        let inFile = try XCTUnwrap(store.attachment(message: MessageRowID(f.incomingFile)))
        XCTAssertEqual(inFile.nextChunk, 1)
        XCTAssertEqual(inFile.workFile, "files/partial/beach.part")
        XCTAssertEqual(try store.incomingFilesMoving(author: sam), 1)
        let outFile = try XCTUnwrap(store.attachment(message: MessageRowID(f.outgoingFile)))
        XCTAssertEqual(outFile.waiting, .room)
        // Still Sam's file: a Delivered receipt for its item leaves it to the whole file's.
        let outMessage = try XCTUnwrap(store.message(MessageRowID(f.outgoingFile)))
        XCTAssertEqual(outMessage.conversation, sam.conversation)
        XCTAssertEqual(try store.raiseStatuses(contact: sam, ids: [outMessage.id], event: .deliveredReceipt, exceptAttachments: true, at: 1), [])
        let hits = try store.search(SearchQuery("umbrella"))
        XCTAssertEqual(Set(hits.map(\.conversation)), [sam.conversation, alex.conversation])
        XCTAssertEqual(try store.search(SearchQuery("umbrella"), in: sam.conversation).map(\.message), [unread.key])
        XCTAssertEqual(try store.search(SearchQuery("lines")).map(\.index), [5], "found at its place")
        XCTAssertEqual(try store.undecryptable(contact: alex).map(\.id), [MessageID(high: 1, low: 2)])
        XCTAssertFalse(try store.markNoticeRead(contact: sam, digest: [UInt8](repeating: 0, count: 32), at: 3_000), "read before")
        XCTAssertEqual(try store.sealedState(contact: sam)?.sealed, [10, 11])

        // And it goes on as before: a receipt raises the delivery, a read is marked, a new contact has its conversation.
        let sent = try XCTUnwrap(f.outgoing.first { $0.value.status == .sent && $0.value.text.hasPrefix("sent") })
        XCTAssertEqual(try store.raiseStatuses(contact: sam, ids: [sent.key], event: .deliveredReceipt, at: 4_000).map(\.current), [.delivered])
        XCTAssertEqual(try store.markRead(conversation: sam.conversation, ids: [unread.key], at: 4_001), [unread.key])
        let kim = try store.addContact(StoreTestCase.newContact("Kim", key: 20), at: 4_002).id
        XCTAssertEqual(try store.storedConversation(kim.conversation)?.kind, .direct)
        let toKim = try store.insertOutgoing(contact: kim, id: .random(), content: .text("hi Kim"), at: 4_003)
        XCTAssertEqual(try store.message(toKim)?.status, .sending)
        XCTAssertEqual(try store.outbox(contact: kim).map(\.message), [toKim])
        XCTAssertNil(try store.database.queryOne("SELECT 1 FROM pragma_table_info('contacts') WHERE name = 'timer_seconds'"),
                     "the timer is the conversation's only")
    }

    /// A row the new schema refuses (a message of no contact, which foreign keys kept out
    /// until someone edited the file by hand): the step stops, says so in one line, and the
    /// file stays at version 14 with everything as it was.
    func testAConversationStepThatFailsLeavesTheStoreAsItWas() throws {
        let old = try Store(path: path, migrations: Self.stepsBeforeConversations)
        let sam = try StoreTestCase.addContactAsBefore(old, StoreTestCase.newContact("Sam"), at: 1_000)
        try StoreTestCase.insertAsBefore(old.database, contact: sam, .outgoing, .text("kept"), at: 2_000, position: 1)
        try old.database.execute("PRAGMA foreign_keys = OFF")
        try StoreTestCase.insertAsBefore(old.database, contact: ContactID(404), .incoming, .text("of nobody"), at: 2_001, position: 1)
        old.close()
        func snapshot(_ db: Database) throws -> [String] {
            try db.query("SELECT type || ' ' || name FROM sqlite_master ORDER BY name").map { try $0.string(at: 0) }
                + db.query("SELECT CAST(content AS TEXT) AS t FROM messages ORDER BY rowid").map { try $0.string("t") }
        }
        let before = try Store(path: path, migrations: Self.stepsBeforeConversations)
        let schemaBefore = try snapshot(before.database)
        before.close()

        XCTAssertThrowsError(try Store(path: path)) { error in
            guard case .migrationFailed(_, let version, let left, _)? = error as? StoreError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(version, 15)
            XCTAssertEqual(left, 14)
            let line = "\(error)"
            XCTAssertFalse(line.contains("\n"), line)
            XCTAssertTrue(line.contains("schema version 15") && line.contains("left at version 14"), line)
        }
        let again = try Store(path: path, migrations: Self.stepsBeforeConversations)
        defer { again.close() }
        XCTAssertEqual(try again.database.userVersion, 14)
        XCTAssertEqual(try snapshot(again.database), schemaBefore, "nothing of the step stayed")
        XCTAssertNotNil(try again.database.queryOne("SELECT 1 FROM pragma_table_info('contacts') WHERE name = 'timer_seconds'"))
    }
}
