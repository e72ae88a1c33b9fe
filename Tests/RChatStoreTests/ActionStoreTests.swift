import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// Actions (schema step 22): a reaction is a row of its own, with a position, but no item of
/// its conversation — not in its pages, counts, length or unread count — read by its target,
/// and gone with it when the target's timer deletes it.
final class ActionStoreTests: StoreTestCase {
    func testAReactionIsNoItemOfItsConversationAndGoesWithItsTarget() throws {
        let question = MessageID.random()
        try store.insertOutgoing(contact: sam, id: question, content: .text("Dinner at 7?"), at: 10)
        let reaction = MessageID.random()
        try XCTUnwrap(store.insertIncoming(contact: sam, id: reaction,
                                           content: .control(.reaction(target: question, emoji: "👍", counter: 1)), at: 11))
        let answer = MessageID.random()
        try XCTUnwrap(store.insertIncoming(contact: sam, id: answer, content: .text("yes"), at: 12))
        try store.insertOutgoing(contact: sam, id: .random(), content: .control(.reaction(target: answer, emoji: "❤️", counter: 1)), at: 13)

        let items = try store.conversation(contact: sam, limit: 10).compactMap { item -> MessageID? in
            if case .message(let m) = item { m.id } else { nil }
        }
        XCTAssertEqual(items, [question, answer])
        XCTAssertEqual(try store.conversationCount(contact: sam), 2)
        XCTAssertEqual(try store.conversationLength(conversation: sam.conversation), 2)
        XCTAssertEqual(try store.unreadCount(contact: sam), 1, "the answer, not the reaction")
        // A page addressed by how many of the newest to skip counts shown items only.
        let page = try store.conversation(sam.conversation, limit: 1, skippingLatest: 1)
        guard case .message(let first)? = page.first else { return XCTFail("\(page)") }
        XCTAssertEqual(first.id, question)
        XCTAssertEqual(try store.actions(conversation: sam.conversation, targets: [question, answer]).map(\.id).count, 2)
        XCTAssertEqual(try store.actions(conversation: sam.conversation, targets: [question]).map(\.id), [reaction])

        // The question's timer runs out: its reaction goes with it.
        try store.database.execute("UPDATE messages SET expires_at = 20 WHERE id = ?", [.blob(question.bytes)])
        XCTAssertEqual(try store.deleteExpired(at: 20).map(\.id), [question])
        XCTAssertNil(try store.message(contact: sam, id: reaction))
        XCTAssertEqual(try store.actions(conversation: sam.conversation, targets: [question]).count, 0)
        XCTAssertEqual(try store.actions(conversation: sam.conversation, targets: [answer]).count, 1)
        // Its place is kept: what comes next never takes a position the reaction had.
        let next = try XCTUnwrap(store.insertIncoming(contact: sam, id: .random(), content: .text("later"), at: 30))
        XCTAssertGreaterThan(try XCTUnwrap(store.message(next)).position, 4)
        XCTAssertEqual(try store.expiredIDs(conversation: sam.conversation, among: [reaction]), [reaction], "a second copy is not stored")
    }

    /// Reactions that came before their message wait: those stored before the cutoff go,
    /// the rest are counted; one whose message is here is not waiting.
    func testReactionsWaitingForTheirMessageAreSweptAndCounted() throws {
        let here = MessageID.random(), away = MessageID.random()
        try XCTUnwrap(store.insertIncoming(contact: sam, id: here, content: .text("here"), at: 1))
        for (n, at) in [Int64(10), 20, 30].enumerated() {
            try XCTUnwrap(store.insertIncoming(contact: sam, id: .random(),
                                               content: .control(.reaction(target: away, emoji: "👍", counter: UInt64(n + 1))), at: at))
        }
        try XCTUnwrap(store.insertIncoming(contact: sam, id: .random(), content: .control(.reaction(target: here, emoji: "👍", counter: 1)), at: 5))
        XCTAssertEqual(try store.sweepWaitingActions(conversation: sam.conversation, storedBefore: 0), 3)
        XCTAssertEqual(try store.sweepWaitingActions(conversation: sam.conversation, storedBefore: 25), 1, "the two older ones went")
        XCTAssertEqual(try store.actions(conversation: sam.conversation, targets: [away]).count, 1)
        XCTAssertEqual(try store.actions(conversation: sam.conversation, targets: [here]).count, 1, "not waiting: kept")
        // Its message arrives: nothing waits any more.
        try XCTUnwrap(store.insertIncoming(contact: sam, id: away, content: .text("now here"), at: 40))
        XCTAssertEqual(try store.sweepWaitingActions(conversation: sam.conversation, storedBefore: 1_000), 0)
        XCTAssertEqual(try store.actions(conversation: sam.conversation, targets: [away]).count, 1)
    }
}
