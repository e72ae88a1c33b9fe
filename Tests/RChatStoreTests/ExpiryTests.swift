import XCTest
import RChatCore
@testable import RChatStore

/// Messages deleted when their time ran out: their place is never taken again, the receipts
/// owed for them still go, and no copy of them is stored again.
final class ExpiryTests: StoreTestCase {
    func testADeletedMessageKeepsItsPlaceItsReceiptsAndNeverComesBack() throws {
        let sam: ContactID = self.sam
        let first = MessageID.random(), second = MessageID.random()
        try store.insertIncoming(contact: sam, id: first, content: .text("one"), at: 10)
        try store.insertIncoming(contact: sam, id: second, content: .text("two"), at: 11)
        try store.transaction { tx in
            try tx.setExpiry(contact: sam, ids: [first, second], after: .thirtySeconds)
            try tx.oweReadReceipts(contact: sam, ids: [second])
            try tx.startExpiry(contact: sam, ids: [second], at: 20)
        }
        let deleted = try store.deletingExpired(at: 50)
        XCTAssertEqual(deleted.map(\.id), [second], "only what was shown and ran out")
        XCTAssertEqual(try store.conversation(contact: sam, limit: 10).count, 1)
        // Its receipts are still owed, from its tombstone.
        XCTAssertEqual(try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 10).map(\.id), [first, second])
        XCTAssertEqual(try store.readReceiptsOwed(contact: sam, limit: 10), [second])
        try store.settleReadReceipts(contact: sam, ids: [second])
        XCTAssertEqual(try store.readReceiptsOwed(contact: sam, limit: 10), [])
        // A later message does not take its place; a copy of it is never stored again.
        let third = MessageID.random()
        try store.insertIncoming(contact: sam, id: third, content: .text("three"), at: 60)
        let positions = try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 10)
        XCTAssertEqual(positions.map(\.id), [first, second, third])
        XCTAssertEqual(Set(positions.map(\.position)).count, 3, "three places")
        XCTAssertNil(try store.insertIncoming(contact: sam, id: second, content: .text("two"), at: 70))
        XCTAssertNil(try store.message(contact: sam, id: second))
    }

    /// What the engine sleeps until: the first timer that runs out, and whether its own
    /// connection wrote since it last read it.
    func testTheEarliestExpiryIsTheFirstTimerThatRunsOut() throws {
        let sam: ContactID = self.sam
        XCTAssertNil(try store.earliestExpiry())
        let first = MessageID.random(), second = MessageID.random()
        try store.insertIncoming(contact: sam, id: first, content: .text("one"), at: 10)
        try store.insertIncoming(contact: sam, id: second, content: .text("two"), at: 11)
        let before = store.changesWritten
        try store.transaction { tx in
            try tx.setExpiry(contact: sam, ids: [first, second], after: .thirtySeconds)
            try tx.startExpiry(contact: sam, ids: [second], at: 20)
            try tx.startExpiry(contact: sam, ids: [first], at: 25)
        }
        XCTAssertGreaterThan(store.changesWritten, before)
        XCTAssertEqual(try store.earliestExpiry(), 50)
        let unchanged = store.changesWritten
        _ = try store.conversation(contact: sam, limit: 10)
        XCTAssertEqual(store.changesWritten, unchanged, "reading writes nothing")
        XCTAssertEqual(try store.deletingExpired(at: 50).map(\.id), [second])
        XCTAssertEqual(try store.earliestExpiry(), 55)
    }
}

/// Issue 27, finding 5: a disappeared message's text stays in `rchat.db-wal` (frames written
/// when it arrived, and the pages before secure delete zeroed them) for as long as the
/// engine keeps the store open — days. After an expiry pass nothing of it is left in the
/// log or the database file, read raw while the store is still open.
final class ExpiryWALTests: StoreTestCase {
    func testNoCopyOfADisappearedMessageStaysInTheLogWhileTheStoreIsOpen() throws {
        let sam: ContactID = self.sam
        let secret = "quetzalcoatl whispers in the write-ahead log"
        let id = MessageID.random()
        try store.insertIncoming(contact: sam, id: id, content: .text(secret), at: 10)
        for i in 0..<20 { try store.insertIncoming(contact: sam, id: .random(), content: .text("filler \(i)"), at: 11) }
        try store.transaction { tx in
            try tx.setExpiry(contact: sam, ids: [id], after: .thirtySeconds)
            try tx.startExpiry(contact: sam, ids: [id], at: 20)
        }
        // Another connection open on the file, as the view's model or a command beside the
        // engine: the log is not removed by the last close.
        let other = try Store(home: home.path)
        defer { other.close() }
        XCTAssertEqual(try other.message(contact: sam, id: id)?.id, id)
        func rawBytes() throws -> Data {
            var bytes = try Data(contentsOf: URL(fileURLWithPath: dbPath))
            if let wal = try? Data(contentsOf: URL(fileURLWithPath: dbPath + "-wal")) { bytes.append(wal) }
            return bytes
        }
        XCTAssertNotNil(try rawBytes().range(of: Data("quetzalcoatl".utf8)), "the text is there before its time")
        XCTAssertEqual(try store.deletingExpired(at: 60).map(\.id), [id])
        XCTAssertNil(try rawBytes().range(of: Data("quetzalcoatl".utf8)),
                     "neither the log nor the database file keeps the disappeared text, with both connections open")
        XCTAssertNil(try other.message(contact: sam, id: id), "the other connection sees it gone")
    }
}
