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
    }

    func testLastActivityIsTheNewestItemsTime() throws {
        XCTAssertEqual(try store.lastActivity(conversation: sam.conversation), 0)
        try store.insertIncoming(contact: sam, id: .random(), content: .text("x"), at: 50, sentAt: 40)
        XCTAssertEqual(try store.lastActivity(conversation: sam.conversation), 40)
        _ = try store.addSystemRow(contact: sam, kind: .couldNotDecrypt, text: "a row", action: nil, messageIDs: [], at: 70)
        XCTAssertEqual(try store.lastActivity(conversation: sam.conversation), 70)
    }
}
