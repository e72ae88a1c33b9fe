import Foundation
import XCTest
import RChatCore
import RChatStore
@testable import RChatEngine

/// Conversations by id through a real engine and relay: Sam and a contact named "Ｓａｍ"
/// (full width) are two conversations whose events and pages never mix, and a rename while
/// the engine runs keeps every event on the same conversation.
final class ConversationIDEngineTests: RelayEngineTestCase {
    final class Events: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [ChatEvent] = []
        func append(_ event: ChatEvent) { lock.withLock { list.append(event) } }
        var count: Int { lock.withLock { list.count } }
        func since(_ n: Int) -> [ChatEvent] { lock.withLock { Array(list.dropFirst(n)) } }
        var arrivals: [(ConversationID, MessageID)] {
            lock.withLock { list.compactMap { if case let .newMessage(c, id, _, _, _) = $0 { (c, id) } else { nil } } }
        }
    }

    func testTwinsAndARenameWhileRunningKeepEventsOnTheirConversation() throws {
        let address = try startRelay()
        let (alice, sam) = try aliceAndInitiatingSam(relay: address)
        let twin = try account("Twin", relay: address)
        let added = try alice.addContact(try twin.identity().contactCode(device: twin.device), name: "Ｓａｍ")
        _ = try twin.addContact(try alice.identity().contactCode(device: alice.device), name: "Alice")
        let samID = try alice.contact(named: "Sam").id.conversation, twinID = added.conversation
        XCTAssertNotEqual(samID, twinID)
        XCTAssertEqual(try alice.contact(named: "ｓａｍ").id.conversation, twinID, "case folds, width does not")

        let events = Events()
        let aliceEngine = try startEngine(alice, logged: true) { engine in engine.onEvent = { events.append($0) } }
        let samEngine = try startEngine(sam, logged: false), twinEngine = try startEngine(twin, logged: false)
        let fromSam = try sam.send(to: "Alice", content: .text("from Sam"))
        let fromTwin = try twin.send(to: "Alice", content: .text("from the twin"))
        samEngine.engine.wake(); twinEngine.engine.wake()
        try untilDeadline("both arrive", seconds: 20) { events.arrivals.count >= 2 }
        XCTAssertTrue(events.arrivals.contains { $0 == (samID, fromSam) })
        XCTAssertTrue(events.arrivals.contains { $0 == (twinID, fromTwin) })

        // Renamed (as `rchat rename` does, from another connection) while the engine runs:
        // what arrives next is still Sam's conversation.
        let beforeRename = events.count
        try alice.rename(samID, to: "Samuel")
        try untilDeadline("the running engine tells the view its list changed", seconds: 10) {
            events.since(beforeRename).contains(.conversationsChanged)
        }
        let after = try sam.send(to: "Alice", content: .text("after the rename"))
        samEngine.engine.wake()
        try untilDeadline("the message after the rename arrives", seconds: 20) { events.arrivals.count >= 3 }
        XCTAssertEqual(events.arrivals.last.map { $0.0 }, samID)
        XCTAssertEqual(events.arrivals.last.map { $0.1 }, after)

        let model = try EngineChatModel(account: AccountService(locations: alice.locations), wake: { aliceEngine.engine.wake() })
        let texts = { (id: ConversationID) in model.page(of: id, before: nil, limit: 10).compactMap(\.message?.text) }
        XCTAssertEqual(texts(samID), ["from Sam", "after the rename"])
        XCTAssertEqual(texts(twinID), ["from the twin"])
        XCTAssertEqual(Set(model.conversations().map(\.name)), ["Samuel", "Ｓａｍ"])
        XCTAssertEqual(model.conversations().first { $0.id == samID }?.name, "Samuel")

        // The twin's name folded onto Sam's new one is taken; its own in another case is not.
        XCTAssertThrowsError(try model.rename(twinID, to: "samuel")) { error in
            XCTAssertEqual("\(error)", "A contact named Samuel already exists; choose another name.")
        }
        XCTAssertThrowsError(try model.rename(twinID, to: "")) { error in
            XCTAssertTrue("\(error)".hasPrefix("Name must be 1 to 64 bytes"), "\(error)")
        }
        XCTAssertEqual(model.conversations().first { $0.id == twinID }?.name, "Ｓａｍ", "refused: unchanged")
        try model.rename(twinID, to: "ＳＡＭ")
        XCTAssertEqual(model.conversations().first { $0.id == twinID }?.name, "ＳＡＭ")
        XCTAssertEqual(texts(twinID), ["from the twin"])
    }
}

extension ConversationItem {
    fileprivate var message: MessageItem? { if case .message(let m) = self { m } else { nil } }
}
