import RChatCore
import XCTest
@testable import RChatStore

final class ReceiptTests: StoreTestCase {
    func testEveryIncomingMessageAfterTheMarkOwesItsDeliveredReceipt() throws {
        let a = MessageID.random(), b = MessageID.random(), c = MessageID.random()
        XCTAssertEqual(try store.contactsOwedReceipts(), [])
        try store.insertIncoming(contact: sam, id: a, content: .text("a"), at: 1)
        try store.insertOutgoing(contact: sam, id: .random(), content: .text("mine"), at: 2)
        try store.transaction { tx in
            _ = try tx.insertIncoming(contact: sam, [IncomingMessage(id: b, content: .text("b"), sentAt: 3, seq: 1),
                                                     IncomingMessage(id: c, content: .text("c"), sentAt: 3, seq: 2)], at: 3)
        }
        let owed = try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 10)
        XCTAssertEqual(owed.map(\.id), [a, b, c], "incoming only, oldest first")
        XCTAssertEqual(try store.contactsOwedReceipts(), [sam])
        XCTAssertEqual(try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 2).map(\.id), [a, b])
        XCTAssertEqual(try store.deliveredReceiptsOwed(contact: sam, after: owed[0].position, limit: 10).map(\.id), [b, c],
                       "what this run already sent is skipped")

        try store.settleDeliveredReceipts(contact: sam, through: owed[1].position)
        XCTAssertEqual(try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 10).map(\.id), [c])
        try store.settleDeliveredReceipts(contact: sam, through: owed[0].position)
        XCTAssertEqual(try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 10).map(\.id), [c], "the mark never goes back")
        try store.settleDeliveredReceipts(contact: sam, through: owed[2].position)
        XCTAssertEqual(try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 10), [])
        XCTAssertEqual(try store.contactsOwedReceipts(), [])

        // A message stored later is owed again; another contact's mark is its own.
        let d = MessageID.random()
        let alex = try store.addContact(Self.newContact("Alex", key: 40), at: 1).id
        try store.insertIncoming(contact: sam, id: d, content: .text("d"), at: 4)
        try store.insertIncoming(contact: alex, id: a, content: .text("from Alex"), at: 4)
        XCTAssertEqual(try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 10).map(\.id), [d])
        XCTAssertEqual(try store.deliveredReceiptsOwed(contact: alex, after: nil, limit: 10).map(\.id), [a])
        XCTAssertEqual(Set(try store.contactsOwedReceipts()), [sam, alex])
    }

    func testADuplicateOwesNothingMore() throws {
        let a = MessageID.random()
        try store.insertIncoming(contact: sam, id: a, content: .text("a"), at: 1)
        let owed = try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 10)
        try store.settleDeliveredReceipts(contact: sam, through: owed[0].position)
        XCTAssertNil(try store.insertIncoming(contact: sam, id: a, content: .text("a"), at: 2))
        XCTAssertEqual(try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 10), [])
    }

    func testReadReceiptsAreOwedUntilSettled() throws {
        let a = MessageID.random(), b = MessageID.random()
        try store.insertIncoming(contact: sam, id: a, content: .text("a"), at: 1)
        try store.insertIncoming(contact: sam, id: b, content: .text("b"), at: 2)
        let all = try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 10)
        try store.settleDeliveredReceipts(contact: sam, through: all.last!.position)
        XCTAssertEqual(try store.contactsOwedReceipts(), [])
        try store.transaction { tx in
            let shown = try tx.markRead(contact: sam, at: 5)
            try tx.oweReadReceipts(contact: sam, ids: shown)
        }
        XCTAssertEqual(try store.readReceiptsOwed(contact: sam, limit: 10), [a, b])
        XCTAssertEqual(try store.contactsOwedReceipts(), [sam])
        try store.settleReadReceipts(contact: sam, ids: [a])
        XCTAssertEqual(try store.readReceiptsOwed(contact: sam, limit: 10), [b])
        try store.settleReadReceipts(contact: sam, ids: [b])
        XCTAssertEqual(try store.contactsOwedReceipts(), [])
    }
}
