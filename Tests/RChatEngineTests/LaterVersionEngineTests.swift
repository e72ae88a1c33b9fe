import Foundation
import XCTest
import RChatCore
import RChatCrypto
@testable import RChatEngine

/// What a later rChat writes, sent to a real engine by a raw peer in a session with it
/// (issue 29 item 5): kept whole, shown as needing a newer rChat, Delivered — never dropped
/// as forged while the relay is told it was taken.
final class LaterVersionEngineTests: RelayEngineTestCase {
    func testWhatALaterVersionWritesIsStoredWholeShownAndDelivered() throws {
        let (alice, _, sam, _) = try aliceWithRawSamInSession()

        // A content kind, an attachment kind, a control kind and a timer this version does not
        // know; an item of an envelope kind it does not know; one that may pass unseen.
        let contents: [[UInt8]] = [[9, 1, 2, 3], [2, 7, 0x61], [3, 9, 0, 0], [3, 1, 0, 0, 0, 45]]
        var kept: [MessageID: [UInt8]] = [:]
        for bytes in contents { kept[try sam.send(.message, bytes)] = bytes }
        let reaction: [UInt8] = [0xf0, 0x9f, 0x91, 0x8d, 0, 1]
        kept[try sam.send(laterKind: 40, reaction)] = [0, 40] + reaction
        let unseen = try sam.send(laterKind: 200, [1, 2, 3])
        let last = try sam.send(text: "and this you can read")

        try untilDeadline("Alice stores all that is kept", seconds: 20) {
            try alice.conversation("Sam").contains { if case .message(let m) = $0 { m.id == last } else { false } }
        }
        var shown: [MessageID: MessageItem] = [:]
        for case .message(let m) in try alice.conversation("Sam") where m.direction == .incoming { shown[m.id] = m }
        for (id, bytes) in kept {
            let item = try XCTUnwrap(shown[id], "kept: \(bytes.prefix(4))")
            XCTAssertEqual(item.text, "This message needs a newer rChat to be shown.")
            XCTAssertEqual(item.content.encoded(), bytes, "byte for byte, for a later version to show")
            let stored = try XCTUnwrap(try alice.store.message(contact: alice.contact(named: "Sam").id, id: id))
            XCTAssertEqual(stored.content.encoded(), bytes)
        }
        XCTAssertNil(shown[unseen], "a kind that may pass unseen is not kept")
        XCTAssertEqual(shown.count, kept.count + 2, "hi, the kept ones, and the last")

        // Each kept item is Delivered (it was stored); nothing is rejected as forged.
        try read(sam, "Delivered receipts for every kept item", seconds: 20) { seen in
            let delivered = Set(seen.filter { $0.kind == .receiptDelivered }.flatMap { Engine.receiptIDs($0.body) })
            return kept.keys.allSatisfy(delivered.contains) && delivered.contains(last)
        }
        let delivered = Set(sam.seen.filter { $0.kind == .receiptDelivered }.flatMap { Engine.receiptIDs($0.body) })
        XCTAssertFalse(delivered.contains(unseen))
        XCTAssertFalse(logLines.all.contains { $0.contains("rejected") }, logLines.all.joined(separator: "\n"))
    }
}
