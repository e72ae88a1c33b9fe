import Foundation
import XCTest
import RChatCore
import RChatCrypto
@testable import RChatEngine

/// Replies from a sender who chooses what they quote: Sam's keys in a raw client of the relay
/// protocol, meeting Alice's engine at a real relay. A reply quoting a message of another
/// conversation Alice holds (a group's) is dropped, never stored; one quoting her own message
/// shows it; one quoting an id she never had says so.
final class ReplyHostileSenderTests: RelayEngineTestCase {
    func testAReplyReachingIntoAnotherConversationIsDroppedAndTheOthersQuoteWhatAliceHolds() throws {
        var inGroup: MessageID?
        let (alice, _, send) = try hostileSamMeetsAlice { alice in
            let bob = try self.account("Bob", relay: try alice.identity().relay)
            _ = try alice.addContact(try bob.identity().contactCode(device: bob.device), name: nil)
            let group = try alice.createGroup(name: "Friends", members: ["Bob"])
            inGroup = try alice.send(toGroup: group, text: "the group's plans")
        }
        let mine = try alice.send(to: "Sam", content: .text("see you at 7"))
        func reply(_ target: MessageID, _ text: String) throws -> MessageID {
            let id = MessageID.random()
            try send(.message, id, MessageContent.reply(Reply(target: target, text: text)).encoded())
            return id
        }

        let reaching = try reply(try XCTUnwrap(inGroup), "what did the group say?")
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
    }
}
