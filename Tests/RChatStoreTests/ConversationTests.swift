import RChatCore
import XCTest
@testable import RChatStore

final class ConversationTests: StoreTestCase {
    private func describe(_ items: [StoredConversationItem]) -> [String] {
        items.map {
            switch $0 {
            case .message(let m): return m.content.displayText(direction: m.direction)
            case .row(let r): return "[\(r.text)]"
            }
        }
    }

    func testMessagesAndRowsInterleaveInTheOrderStoredHere() throws {
        let lost = MessageID.random()
        try store.insertOutgoing(contact: sam, id: lost, content: .text("m1"), at: 100)
        // Sam's clock is behind: the incoming message still goes after m1, where it arrived.
        try store.insertIncoming(contact: sam, id: .random(), content: .text("m2"), at: 110, sentAt: 50)
        try store.addSystemRow(contact: sam, kind: .couldNotBeRead, text: "1 message couldn't be read on Sam's phone.",
                               action: .resend, messageIDs: [lost], at: 120)
        try store.insertOutgoing(contact: sam, id: .random(), content: .text("m3"), at: 120)
        // Another conversation does not show up here.
        let alex = try store.addContact(Self.newContact("Alex", key: 40), at: 1).id
        try store.insertOutgoing(contact: alex, id: .random(), content: .text("to Alex"), at: 115)

        let all = try store.conversation(contact: sam, limit: 50)
        XCTAssertEqual(describe(all), ["m1", "m2", "[1 message couldn't be read on Sam's phone.]", "m3"])
        guard case .row(let row) = all[2] else { return XCTFail() }
        XCTAssertEqual(row.action, .resend)
        XCTAssertEqual(row.messageIDs, [lost])
        XCTAssertEqual(row.kind, .couldNotBeRead)
        XCTAssertEqual(try store.systemRow(id: row.id), row)
        try store.setSystemRowAction(id: row.id, nil)
        XCTAssertNil(try store.systemRow(id: row.id)?.action)
    }

    func testPagesWalkBackThroughTheHistory() throws {
        var expected: [String] = []
        try store.transaction { tx in
            for i in 0..<1_000 {
                let text = "m\(i)"
                if i % 3 == 0 {
                    try tx.insertIncoming(contact: sam, id: .random(), content: .text(text), at: Int64(i))
                } else {
                    try tx.insertOutgoing(contact: sam, id: .random(), content: .text(text), at: Int64(i))
                }
                expected.append(text)
                if i % 10 == 9 {
                    try tx.addSystemRow(contact: sam, kind: .startedOver, text: "r\(i)", action: nil, messageIDs: [], at: Int64(i))
                    expected.append("[r\(i)]")
                }
            }
        }
        let latest = try store.conversation(contact: sam, limit: 25)
        XCTAssertEqual(describe(latest), Array(expected.suffix(25)))

        var walked: [String] = []
        var before: Int64? = nil
        while true {
            let page = try store.conversation(contact: sam, limit: 64, before: before)
            if page.isEmpty { break }
            XCTAssertEqual(page.map(\.position), page.map(\.position).sorted())
            walked = describe(page) + walked
            before = page.first?.position
        }
        XCTAssertEqual(walked, expected)

        // The same history addressed from the end, as the chat view counts.
        XCTAssertEqual(try store.conversationCount(contact: sam), expected.count)
        XCTAssertEqual(describe(try store.conversation(contact: sam, limit: 25, skippingLatest: 0)), Array(expected.suffix(25)))
        let deep = try store.conversation(contact: sam, limit: 30, skippingLatest: 1_000)
        XCTAssertEqual(describe(deep), Array(expected.dropLast(1_000).suffix(30)))
        XCTAssertEqual(describe(try store.conversation(contact: sam, limit: 30, skippingLatest: expected.count - 5)),
                       Array(expected.prefix(5)))
        XCTAssertEqual(try store.conversation(contact: sam, limit: 30, skippingLatest: expected.count), [])
        XCTAssertEqual(try store.conversation(contact: sam, limit: 0), [])
    }
}
