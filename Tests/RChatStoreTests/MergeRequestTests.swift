import RChatCore
import XCTest
@testable import RChatStore

/// `rchat accept REQUEST --replace CONTACT`: the request's messages and rows join the
/// contact's conversation after what it holds, the request's row goes.
final class MergeRequestTests: StoreTestCase {
    func testTheRequestsItemsJoinTheConversationInOrderAndTheRequestGoes() throws {
        let known = try store.insertIncoming(contact: sam, id: .random(), content: .text("from the Sam you know"), at: 1_100)
        XCTAssertNotNil(known)
        try store.settleDeliveredReceipts(contact: sam, through: try store.nextPosition(contact: sam) - 1)
        var request = Self.newContact("Sam (3f2a)", key: 7)
        request.state = .request
        let stranger = try store.addContact(request, at: 1_200).id
        let shared = MessageID.random()
        _ = try store.insertIncoming(contact: sam, id: shared, content: .text("an id both hold"), at: 1_250)
        try store.settleDeliveredReceipts(contact: sam, through: try store.nextPosition(contact: sam) - 1)
        let first = MessageID.random(), second = MessageID.random()
        _ = try store.insertIncoming(contact: stranger, id: first, content: .text("it is me, on a new install"), at: 1_300)
        _ = try store.insertIncoming(contact: stranger, id: shared, content: .text("the same id again"), at: 1_350)
        _ = try store.addSystemRow(contact: stranger, kind: .fileDiscarded, text: "a row of the request's", action: nil,
                                   messageIDs: [], at: 1_380)
        _ = try store.insertIncoming(contact: stranger, id: second, content: .text("really"), at: 1_400)
        XCTAssertEqual(try store.unreadCount(contact: sam), 2)

        try store.transaction { tx in try tx.mergeRequest(stranger, into: sam) }

        XCTAssertNil(try store.contact(id: stranger), "the request's row is gone")
        XCTAssertNil(try store.contact(named: "Sam (3f2a)"), "and its name is free")
        let items = try store.conversation(contact: sam, limit: 100)
        let texts = items.map { item -> String in
            switch item {
            case .message(let m): if case .text(let t) = m.content { return t } else { return "?" }
            case .row(let r): return r.text
            }
        }
        XCTAssertEqual(texts, ["from the Sam you know", "an id both hold", "it is me, on a new install", "a row of the request's", "really"],
                       "in order after what the conversation held; an id it held is kept once")
        XCTAssertEqual(Set(items.map(\.position)).count, items.count)
        XCTAssertEqual(try store.unreadCount(contact: sam), 4)
        // Delivered receipts are owed for what joined, and only for it.
        XCTAssertEqual(try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 10).map(\.id), [first, second])
        // Search finds them in the conversation they joined.
        XCTAssertEqual(try store.search(SearchQuery("install")).map(\.conversation), [sam.conversation])
    }
}
