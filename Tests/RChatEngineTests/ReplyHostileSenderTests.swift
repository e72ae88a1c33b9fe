import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatSQL
@testable import RChatEngine

/// Replies from a sender who chooses what they quote: Sam's keys in a raw client of the relay
/// protocol, meeting Alice's engine at a real relay. A reply quoting a message of another
/// conversation Alice holds (a group's) is dropped, never stored; one quoting her own message
/// shows it; one quoting an id she never had says so.
final class ReplyHostileSenderTests: RelayEngineTestCase {
    func testAReplyReachingIntoAnotherConversationIsDroppedAndTheOthersQuoteWhatAliceHolds() throws {
        let (alice, send, inGroup) = try hostileSamMeetsAliceWithAGroup()
        let mine = try alice.send(to: "Sam", content: .text("see you at 7"))
        func reply(_ target: MessageID, _ text: String) throws -> MessageID {
            let id = MessageID.random()
            try send(.message, id, MessageContent.reply(Reply(target: target, text: text)).encoded())
            return id
        }

        let reaching = try reply(inGroup, "what did the group say?")
        try untilDeadline("the reply into the group is refused", seconds: 20) {
            logLines.all.contains { $0.contains("rejected a reply from Sam quoting a message of another conversation") }
        }
        let answering = try reply(mine, "7 is fine")
        let unknown = try reply(MessageID.random(), "about that other thing")
        try untilDeadline("both honest replies are stored", seconds: 20) {
            let ids = try self.messages(alice, "Sam").map(\.id)
            return ids.contains(answering) && ids.contains(unknown)
        }
        let shown = try messages(alice, "Sam")
        XCTAssertFalse(shown.contains { $0.id == reaching }, "never stored")
        XCTAssertNil(try alice.store.message(contact: try alice.contact(named: "Sam").id, id: reaching))
        let answer = try XCTUnwrap(shown.first { $0.id == answering })
        XCTAssertEqual(answer.text, "7 is fine")
        XCTAssertEqual(answer.quote, .message(author: "You", text: "see you at 7"))
        XCTAssertEqual(shown.first { $0.id == unknown }?.quote, .notFound)
        XCTAssertEqual(try alice.search(SearchQuery("fine")).map(\.message), [answering], "a reply's text is searched")
        XCTAssertEqual(try alice.search(SearchQuery("say")).count, 0, "nothing of what the dropped reply said")

        // Reactions from the same sender: one to the group's message is dropped; one whose
        // emoji is not one never decodes; one to Alice's message is shown under it, once.
        let intoGroup = MessageID.random()
        try send(.message, intoGroup, MessageContent.control(.reaction(target: inGroup, emoji: "👍", counter: 1)).encoded())
        try untilDeadline("the reaction into the group is refused", seconds: 20) {
            logLines.all.contains { $0.contains("rejected a reaction from Sam to a message of another conversation") }
        }
        var notOne = MessageContent.control(.reaction(target: mine, emoji: "👍", counter: 1)).encoded().dropLast(4)
        notOne += Array("ab".utf8)
        try send(.message, MessageID.random(), Array(notOne))
        try untilDeadline("the reaction that is not one emoji is refused", seconds: 20) {
            logLines.all.contains { $0.contains("a reaction whose emoji is not one emoji") }
        }
        let heart = MessageID.random()
        try send(.message, heart, MessageContent.control(.reaction(target: mine, emoji: "❤️", counter: 1)).encoded())
        try untilDeadline("Sam's heart is under Alice's message", seconds: 20) {
            try self.messages(alice, "Sam").first { $0.id == mine }?.reactions == [MessageItem.Reaction(from: "Sam", emoji: "❤️")]
        }
        XCTAssertFalse(try messages(alice, "Sam").contains { $0.id == heart || $0.id == intoGroup }, "no reaction is an item of the conversation")
        XCTAssertNil(try alice.store.message(contact: try alice.contact(named: "Sam").id, id: intoGroup))
        XCTAssertNotNil(try alice.store.message(contact: try alice.contact(named: "Sam").id, id: heart), "stored, as an item of its own")

        // A reaction before its message: it waits, and shows once the message is there.
        let later = MessageID.random()
        try send(.message, MessageID.random(), MessageContent.control(.reaction(target: later, emoji: "🎉", counter: 1)).encoded())
        try send(.message, later, MessageContent.text("the party is on").encoded())
        try untilDeadline("the 🎉 under the message that came after it", seconds: 20) {
            try self.messages(alice, "Sam").first { $0.id == later }?.reactions == [MessageItem.Reaction(from: "Sam", emoji: "🎉")]
        }
    }

    /// A reply's quote follows its target as this side holds it: the words while it is
    /// there, "Original message deleted" once its timer deleted it (gone from the store).
    func testAQuoteSaysSoOnceItsTargetDisappeared() throws {
        let offline = try RelayAddress(parsing: "127.0.0.1:9/" + String(repeating: "A", count: 43))
        let alice = try account("Alice", relay: offline), sam = try account("Sam", relay: offline)
        _ = try alice.addContact(try sam.identity().contactCode(device: sam.device), name: nil)
        let first = try alice.send(to: "Sam", content: .text("soon gone"))
        let reply = try alice.send(to: "Sam", content: .reply(Reply(target: first, text: "about that")))
        XCTAssertEqual(try messages(alice, "Sam").first { $0.id == reply }?.quote, .message(author: "You", text: "soon gone"))
        try alice.store.database.execute("UPDATE messages SET expires_at = 1 WHERE id = ?", [.blob(first.bytes)])
        XCTAssertEqual(try alice.store.deleteExpired(at: 2).map(\.id), [first])
        let shown = try messages(alice, "Sam")
        XCTAssertEqual(shown.map(\.id), [reply])
        XCTAssertEqual(shown.first?.quote, .deleted)
        XCTAssertEqual(shown.first?.quote?.words, "Original message deleted")
        XCTAssertThrowsError(try alice.send(to: "Sam", content: .reply(Reply(target: first, text: "and again")))) {
            XCTAssertTrue("\($0)".contains("no message \(first.hex) in Sam to reply to"), "\($0)")
        }
    }
}
