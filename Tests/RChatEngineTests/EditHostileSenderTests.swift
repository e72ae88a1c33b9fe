import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatSQL
@testable import RChatEngine

/// Edits and deletes from a sender who chooses what they change: Sam's keys in a raw client
/// of the relay protocol, meeting Alice's engine at a real relay. Sam can change only what
/// Sam wrote: an edit or a delete of Alice's message changes nothing, one of a group's
/// message is dropped; past 10 edits only the first 10 in the order count; an edit or a
/// delete before its message waits for it and then applies.
final class EditHostileSenderTests: RelayEngineTestCase {
    func testOnlyTheAuthorChangesAMessageAndNoMoreThanTenTimes() throws {
        let (alice, send, inGroup) = try hostileSamMeetsAliceWithAGroup()
        let mine = try alice.send(to: "Sam", content: .text("see you at 7"))
        func item(_ content: MessageContent) throws -> MessageID {
            let id = MessageID.random()
            try send(.message, id, content.encoded())
            return id
        }
        func shown(_ id: MessageID) throws -> MessageItem? { try messages(alice, "Sam").first { $0.id == id } }
        func waitForLog(_ line: String, count: Int = 1) throws {
            try untilDeadline(line, seconds: 20) { logLines.all.filter { $0.contains(line) }.count >= count }
        }

        // Into the group: dropped before it is stored.
        let intoGroup = try item(.control(.edit(target: inGroup, text: "mine now", counter: 1)))
        try waitForLog("rejected an edit from Sam to a message of another conversation")
        XCTAssertNil(try alice.store.message(contact: try alice.contact(named: "Sam").id, id: intoGroup))
        // Alice's own message: stored as an item (its Delivered is owed), then it goes: it may not change hers.
        _ = try item(.control(.edit(target: mine, text: "see you never", counter: 1)))
        _ = try item(.control(.unsend(target: mine)))
        try waitForLog("may not change message \(mine.hex)", count: 2)
        XCTAssertEqual(try shown(mine)?.text, "see you at 7")
        XCTAssertEqual(try shown(mine)?.isEdited, false)

        // Sam's own message, edited twelve times, the edits arriving out of order: the first
        // ten in the order count, the rest are deleted.
        let his = try item(.text("v0"))
        for n in [12, 3, 1, 11, 2, 4, 5, 6, 7, 8, 9, 10] { _ = try item(.control(.edit(target: his, text: "v\(n)", counter: UInt64(n)))) }
        try untilDeadline("the tenth edit is in force", seconds: 20) { try shown(his)?.text == "v10" }
        XCTAssertEqual(try shown(his)?.versions.map(\.text), ["v0"] + (1...10).map { "v\($0)" })
        XCTAssertEqual(try alice.search(SearchQuery("v10")).map(\.message), [his], "search finds the text in force")
        XCTAssertEqual(try alice.search(SearchQuery("v0")).count, 0, "and not the one it replaced")
        XCTAssertEqual(try alice.store.actions(conversation: try alice.contact(named: "Sam").id.conversation, targets: [his]).count, 10,
                       "the surplus is not kept")

        // Before their messages: an edit and a delete wait, then apply.
        let later = MessageID.random(), gone = MessageID.random()
        _ = try item(.control(.edit(target: later, text: "the party is on Friday", counter: 1)))
        _ = try item(.control(.unsend(target: gone)))
        try send(.message, later, MessageContent.text("the party is on Thursday").encoded())
        try send(.message, gone, MessageContent.text("my secret plan").encoded())
        try untilDeadline("the waiting edit applied", seconds: 20) { try shown(later)?.text == "the party is on Friday" }
        try untilDeadline("the waiting delete applied", seconds: 20) { try shown(gone)?.isUnsent == true }
        XCTAssertEqual(try shown(gone)?.text, "This message was deleted.")
        XCTAssertEqual(try alice.search(SearchQuery("secret")).count, 0)
        // A reaction to what is deleted: stored for its Delivered, never shown.
        _ = try item(.control(.reaction(target: gone, emoji: "👍", counter: 1)))
        try waitForLog("may not change message \(gone.hex)", count: 1)
        XCTAssertEqual(try shown(gone)?.reactions, [])
        // An edit with no text never decodes.
        try send(.message, MessageID.random(), [3, 4] + his.bytes + [0, 0, 0, 0, 0, 0, 0, 20])
        try waitForLog("message content with an empty text")
        XCTAssertEqual(try shown(his)?.text, "v10")
    }
}
