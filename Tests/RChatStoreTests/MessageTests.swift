import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

final class MessageTests: StoreTestCase {
    func testInsertOutgoingWritesMessageOutboxAndTimelineTogether() throws {
        let id = MessageID.random()
        let row = try store.insertOutgoing(contact: sam, id: id, content: .text("hi Sam"), at: 2_000, seq: 7, keysFingerprint: [9, 9])
        let message = try XCTUnwrap(store.message(contact: sam, id: id))
        XCTAssertEqual(message.rowID, row)
        XCTAssertEqual(message.direction, .outgoing)
        XCTAssertEqual(message.status, .sending)
        XCTAssertEqual(message.content, .text("hi Sam"))
        XCTAssertEqual(message.createdAt, 2_000)
        XCTAssertEqual(message.seq, 7)
        XCTAssertEqual(message.keysFingerprint, [9, 9])
        XCTAssertFalse(message.isResent)
        XCTAssertEqual(try store.outbox(contact: sam).map(\.message), [row])
        XCTAssertEqual(try store.statusLog(message: row), [StatusLogEntry(status: .sending, at: 2_000)])
    }

    func testFailureMidwayThroughInsertOutgoingLeavesNothing() throws {
        for table in ["outbox", "status_log"] {
            try store.database.execute("""
                CREATE TEMP TRIGGER fail_\(table) BEFORE INSERT ON main.\(table)
                BEGIN SELECT RAISE(ABORT, 'injected failure'); END
                """)
            XCTAssertThrowsError(try store.insertOutgoing(contact: sam, id: .random(), content: .text("x"), at: 1)) {
                XCTAssertTrue("\($0)".contains("injected failure"))
            }
            for t in ["messages", "outbox", "status_log"] { XCTAssertEqual(try count(t), 0, "\(t) after a failed \(table) insert") }
            try store.database.execute("DROP TRIGGER temp.fail_\(table)")
        }
    }

    func testFailureInsideALargerTransactionUndoesOnlyThatOperation() throws {
        try store.database.execute("""
            CREATE TEMP TRIGGER fail_outbox BEFORE INSERT ON main.outbox
            WHEN (SELECT content FROM main.messages WHERE rowid = NEW.message_rowid) = CAST(x'01' || 'bad' AS BLOB)
            BEGIN SELECT RAISE(ABORT, 'injected failure'); END
            """)
        try store.transaction { tx in
            try tx.insertOutgoing(contact: sam, id: .random(), content: .text("good"), at: 1)
            XCTAssertThrowsError(try tx.insertOutgoing(contact: sam, id: .random(), content: .text("bad"), at: 2))
            try tx.putSealedState(contact: sam, sealed: [1, 2, 3], at: 2)
        }
        XCTAssertEqual(try store.database.query("SELECT content FROM messages").map { try $0.blob("content") },
                       [MessageContent.text("good").encoded()])
        XCTAssertEqual(try count("outbox"), 1)
        XCTAssertEqual(try count("status_log"), 1)
        XCTAssertEqual(try store.sealedState(contact: sam)?.sealed, [1, 2, 3])
    }

    func testMessagesAndSealedStateCommitOrVanishTogether() throws {
        struct Crash: Error {}
        let id = MessageID.random()
        XCTAssertThrowsError(try store.transaction { tx in
            try tx.insertIncoming(contact: sam, id: id, content: .text("decrypted"), at: 3)
            try tx.putSealedState(contact: sam, sealed: [7], at: 3)
            throw Crash()
        })
        XCTAssertNil(try store.message(contact: sam, id: id))
        XCTAssertNil(try store.sealedState(contact: sam))
        try store.transaction { tx in
            try tx.insertIncoming(contact: sam, id: id, content: .text("decrypted"), at: 3)
            try tx.putSealedState(contact: sam, sealed: [7], at: 3)
        }
        XCTAssertEqual(try store.message(contact: sam, id: id)?.content, .text("decrypted"))
        XCTAssertEqual(try store.sealedState(contact: sam), SealedState(sealed: [7], updatedAt: 3))
        try store.putSealedState(contact: sam, sealed: [8], at: 4)
        XCTAssertEqual(try store.sealedState(contact: sam), SealedState(sealed: [8], updatedAt: 4))
        try store.removeSealedState(contact: sam)
        XCTAssertNil(try store.sealedState(contact: sam))
    }

    func testDuplicateOutgoingIdIsRefused() throws {
        let id = MessageID.random()
        try store.insertOutgoing(contact: sam, id: id, content: .text("one"), at: 1)
        XCTAssertThrowsError(try store.insertOutgoing(contact: sam, id: id, content: .text("two"), at: 2)) {
            XCTAssertEqual($0 as? StoreError, .duplicateMessage(id))
        }
        XCTAssertEqual(try count("messages"), 1)
        XCTAssertEqual(try count("outbox"), 1)
    }

    func testIncomingMessageIsStoredOnce() throws {
        let id = MessageID.random()
        let first = try store.insertIncoming(contact: sam, id: id, content: .text("hello"), at: 10, sentAt: 9, seq: 1)
        XCTAssertNotNil(first)
        // The resend of the same message, crossing the first copy.
        XCTAssertNil(try store.insertIncoming(contact: sam, id: id, content: .text("hello"), at: 11))
        XCTAssertNil(try store.insertIncoming(contact: sam, id: id, content: .text("different text, same id"), at: 12))
        XCTAssertEqual(try count("messages"), 1)
        let stored = try XCTUnwrap(store.message(contact: sam, id: id))
        XCTAssertEqual(stored.content, .text("hello"))
        XCTAssertEqual(stored.receivedAt, 10)
        XCTAssertEqual(stored.createdAt, 9)
        XCTAssertNil(stored.status)
        XCTAssertEqual(try store.conversation(contact: sam, limit: 10).count, 1)
        let next = try XCTUnwrap(store.insertIncoming(contact: sam, id: .random(), content: .text("next"), at: 14))
        XCTAssertEqual(try store.message(next)?.position, stored.position + 1, "the duplicates took no place")
        // The same id from another contact is another message.
        let alex = try store.addContact(Self.newContact("Alex", key: 40), at: 1).id
        XCTAssertNotNil(try store.insertIncoming(contact: alex, id: id, content: .text("hello"), at: 13))
    }

    func testMessagesForAnUnknownContactAreRefused() throws {
        let nobody = ContactID(999)
        XCTAssertThrowsError(try store.insertIncoming(contact: nobody, id: .random(), content: .text("x"), at: 1)) {
            XCTAssertEqual($0 as? StoreError, .unknownContact(nobody))
        }
        XCTAssertThrowsError(try store.insertOutgoing(contact: nobody, id: .random(), content: .text("x"), at: 1)) {
            XCTAssertEqual($0 as? StoreError, .unknownContact(nobody))
        }
        XCTAssertEqual(try count("messages"), 0)
    }

    func testMarkReadReturnsWhatWasNewlyShown() throws {
        let a = MessageID.random(), b = MessageID.random()
        try store.insertIncoming(contact: sam, id: a, content: .text("a"), at: 1)
        try store.insertIncoming(contact: sam, id: b, content: .text("b"), at: 2)
        try store.insertOutgoing(contact: sam, id: .random(), content: .text("mine"), at: 3)
        XCTAssertEqual(try store.unreadCount(contact: sam), 2)
        XCTAssertEqual(Set(try store.markRead(contact: sam, at: 5)), [a, b])
        XCTAssertEqual(try store.markRead(contact: sam, at: 6), [])
        XCTAssertEqual(try store.unreadCount(contact: sam), 0)
        XCTAssertEqual(try store.message(contact: sam, id: a)?.readAt, 5)
    }

    func testUndecryptableIdsAreKeptUntilReadable() throws {
        let lost = MessageID.random(), other = MessageID.random()
        XCTAssertTrue(try store.recordUndecryptable(contact: sam, id: lost, at: 1))
        XCTAssertFalse(try store.recordUndecryptable(contact: sam, id: lost, at: 2))
        XCTAssertTrue(try store.recordUndecryptable(contact: sam, id: other, at: 3))
        XCTAssertEqual(try store.undecryptable(contact: sam, notified: false).map(\.id), [lost, other])
        try store.markUndecryptableNotified(contact: sam, ids: [lost])
        XCTAssertEqual(try store.undecryptable(contact: sam, notified: false).map(\.id), [other])
        XCTAssertEqual(try store.undecryptable(contact: sam, notified: true).map(\.id), [lost])
        // The sender resent it and it could be read this time.
        try store.insertIncoming(contact: sam, id: lost, content: .text("again"), at: 4)
        XCTAssertEqual(try store.undecryptable(contact: sam).map(\.id), [other])
    }

    /// The batch goes in whole first; a copy already stored deep in it (past the first
    /// statement of 64 rows) undoes that attempt entirely before the batch goes in without it.
    func testACopyAlreadyStoredLateInABatchLeavesEveryOtherMessageOnceAndInPlace() throws {
        let old = MessageID.random()
        let oldRow = try XCTUnwrap(try store.insertIncoming(contact: sam, id: old, content: .text("stored before"), at: 1))
        var batch = (0..<130).map { IncomingMessage(id: .random(), content: .text("m\($0)"), sentAt: 5, seq: Int64($0)) }
        batch.insert(IncomingMessage(id: old, content: .text("a copy"), sentAt: 5, seq: nil), at: 100)
        let stored = try store.transaction { tx in try tx.insertIncoming(contact: sam, batch, at: 6) }
        XCTAssertEqual(stored.map(\.id), batch.map(\.id).filter { $0 != old })
        XCTAssertEqual(try count("messages"), 131, "the 130 new ones, each once, and the one stored before")
        let oldPosition = try XCTUnwrap(store.message(oldRow)?.position)
        XCTAssertEqual(stored.map(\.position), Array((oldPosition + 1)...(oldPosition + 130)), "places follow on, no gap")
        XCTAssertEqual(try store.message(contact: sam, id: old)?.content, .text("stored before"))
    }

    func testABatchStoresEachIdOnceInOrderWithRowsAndPlacesOfItsOwn() throws {
        let old = MessageID.random()
        try store.insertIncoming(contact: sam, id: old, content: .text("stored before"), at: 1)
        try store.insertOutgoing(contact: sam, id: .random(), content: .text("mine"), at: 1)
        let twice = MessageID.random(), unreadable = MessageID.random()
        XCTAssertTrue(try store.recordUndecryptable(contact: sam, id: unreadable, at: 1))
        // 150 messages: one already stored, one twice in the batch (a replayed frame), one
        // that could not be read before: 64 + 64 + 16 + 4 + 1 rows to the statement.
        var batch: [IncomingMessage] = []
        for i in 0..<147 { batch.append(IncomingMessage(id: i == 70 ? unreadable : .random(), content: .text("m\(i)"), sentAt: 5, seq: Int64(i))) }
        batch.insert(IncomingMessage(id: old, content: .text("a copy"), sentAt: 5, seq: nil), at: 10)
        batch.insert(IncomingMessage(id: twice, content: .text("first"), sentAt: 5, seq: nil), at: 20)
        batch.append(IncomingMessage(id: twice, content: .text("second"), sentAt: 5, seq: nil))
        let stored = try store.transaction { tx in try tx.insertIncoming(contact: sam, batch, at: 6) }

        // Without the stored one, and without the second copy of `twice` (the last message).
        let expected = Array(batch.filter { $0.id != old }.map(\.id).dropLast())
        XCTAssertEqual(stored.map(\.id), expected, "new ids once each, in the order they came")
        let firstPosition = try XCTUnwrap(store.message(contact: sam, id: expected[0])?.position)
        for (offset, s) in stored.enumerated() {
            let message = try XCTUnwrap(store.message(s.row), "row \(s.row) of \(s.id)")
            XCTAssertEqual(message.id, s.id)
            XCTAssertEqual(message.position, firstPosition + Int64(offset), "places follow one another")
            XCTAssertEqual(s.position, message.position, "the position returned is the one stored")
            XCTAssertEqual(message.receivedAt, 6)
        }
        XCTAssertEqual(try store.message(contact: sam, id: twice)?.content, .text("first"))
        XCTAssertEqual(try store.message(contact: sam, id: old)?.content, .text("stored before"))
        XCTAssertEqual(try count("messages"), 2 + 148)
        XCTAssertEqual(try store.undecryptable(contact: sam).map(\.id), [], "read now")
        XCTAssertEqual(try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 1000).map(\.id), [old] + expected)
        // The same batch again stores nothing and takes no place.
        XCTAssertEqual(try store.transaction { tx in try tx.insertIncoming(contact: sam, batch, at: 7) }.count, 0)
        let next = try XCTUnwrap(store.insertIncoming(contact: sam, id: .random(), content: .text("next"), at: 8))
        XCTAssertEqual(try store.message(next)?.position, firstPosition + 148)
    }
}
