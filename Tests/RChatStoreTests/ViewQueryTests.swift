import Foundation
import RChatCore
import XCTest
@testable import RChatStore

/// The queries the full-screen view adds: messages marked shown one by one, the length of a
/// conversation from its last position, and its last activity.
final class ViewQueryTests: StoreTestCase {
    func testMarkReadByIdMarksOnlyUnreadIncomingOnesAndSaysWhich() throws {
        let a = MessageID.random(), b = MessageID.random(), mine = MessageID.random()
        try store.insertIncoming(contact: sam, id: a, content: .text("a"), at: 10)
        try store.insertIncoming(contact: sam, id: b, content: .text("b"), at: 11)
        try store.insertOutgoing(contact: sam, id: mine, content: .text("mine"), at: 12)
        XCTAssertEqual(try store.markRead(conversation: sam.conversation, ids: [a, mine, .random()], at: 20), [a])
        XCTAssertEqual(try store.unreadCount(contact: sam), 1)
        XCTAssertEqual(try store.markRead(conversation: sam.conversation, ids: [a, b], at: 21), [b], "a was read already")
        XCTAssertEqual(try store.message(contact: sam, id: a)?.readAt, 20)
        XCTAssertEqual(try store.unreadCount(contact: sam), 0)
        XCTAssertEqual(try store.markRead(conversation: sam.conversation, ids: [], at: 22), [])
    }

    func testConversationLengthIsTheCountOfMessagesAndRows() throws {
        XCTAssertEqual(try store.conversationLength(conversation: sam.conversation), 0)
        for n in 0..<5 { try store.insertIncoming(contact: sam, id: .random(), content: .text("\(n)"), at: Int64(n)) }
        _ = try store.addSystemRow(contact: sam, kind: .couldNotDecrypt, text: "a row", action: nil, messageIDs: [], at: 9)
        try store.insertOutgoing(contact: sam, id: .random(), content: .text("after"), at: 10)
        XCTAssertEqual(try store.conversationLength(conversation: sam.conversation), try store.conversationCount(contact: sam))
        XCTAssertEqual(try store.conversationLength(conversation: sam.conversation), 7)
        let other = try store.addContact(Self.newContact("Ann", key: 9), at: 1).id
        XCTAssertEqual(try store.conversationLength(conversation: other.conversation), 0)

        // What is deleted keeping its place — a message its timer deleted, a reaction retired
        // with the message it was about, deleted for everyone — is no item to page through:
        // the length stays the count, and the newest page still ends at the newest item.
        let soon = MessageID.random(), liked = MessageID.random()
        try store.insertIncoming(contact: sam, id: soon, content: .text("soon gone"), at: 11)
        try store.insertIncoming(contact: sam, id: liked, content: .text("liked"), at: 12)
        try store.insertOutgoing(contact: sam, id: .random(), content: .control(.reaction(target: liked, emoji: "\u{1F44D}", counter: 1)), at: 13)
        try store.database.execute("UPDATE messages SET expires_at = 1 WHERE id = ?", [.blob(soon.bytes)])
        _ = try store.deleteExpired(at: 2)
        let row = try XCTUnwrap(try store.message(contact: sam, id: liked)).rowID
        try store.transaction { tx in _ = try tx.unsend(message: row) }
        XCTAssertEqual(try store.conversationLength(conversation: sam.conversation), try store.conversationCount(contact: sam))
        XCTAssertEqual(try store.conversationLength(conversation: sam.conversation), 8, "seven, and the deleted one's mark")
        let newest = try store.conversation(sam.conversation, limit: 1, skippingLatest: 0)
        if case .message(let m)? = newest.first { XCTAssertEqual(m.id, liked) } else { XCTFail("\(newest)") }
    }

    func testLastActivityIsTheNewestItemsTime() throws {
        XCTAssertEqual(try store.lastActivity(conversation: sam.conversation), 0)
        try store.insertIncoming(contact: sam, id: .random(), content: .text("x"), at: 50, sentAt: 40)
        XCTAssertEqual(try store.lastActivity(conversation: sam.conversation), 40)
        _ = try store.addSystemRow(contact: sam, kind: .couldNotDecrypt, text: "a row", action: nil, messageIDs: [], at: 70)
        XCTAssertEqual(try store.lastActivity(conversation: sam.conversation), 70)
    }
}
