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
}
