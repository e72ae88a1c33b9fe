import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatStore
@testable import RChatEngine

/// Content through two real engines and a real relay: what the outbox holds is what the
/// other side stores, byte for byte. This version sends text only; an attachment or timer
/// change that arrives (as a later version will send them) is kept whole and shown as a row.
final class MessageContentEngineTests: RelayEngineTestCase {
    let photo = Attachment(kind: .photo, name: "beach.jpg", size: 2_345_678,
                           contentHash: [UInt8](repeating: 0xab, count: 32), key: [UInt8](repeating: 0x17, count: 32))

    func testAnAttachmentAndATimerChangeArriveWholeAndShowAsRows() throws {
        let address = try startRelay()
        let (alice, sam) = try aliceAndInitiatingSam(relay: address)
        let aliceEngine = try startEngine(alice, logged: true)
        _ = try startEngine(sam, logged: true)
        let warmUp = try alice.send(to: "Sam", content: .text("warm-up"))
        aliceEngine.engine.wake()
        try waitForStatus(alice, "Sam", [warmUp], .delivered)

        // Nothing in this version sends them: written to Alice's outbox as a later version would.
        let samID = try XCTUnwrap(alice.store.contact(named: "Sam")).id
        let items: [MessageContent] = [.attachment(photo), .control(.timerChanged(.oneHour)), .text("and text again")]
        var ids: [MessageID] = []
        for content in items {
            let id = MessageID.random()
            try alice.store.insertOutgoing(contact: samID, id: id, content: content, at: Int64(Date().timeIntervalSince1970))
            ids.append(id)
        }
        aliceEngine.engine.wake()
        try waitForStatus(alice, "Sam", ids, .delivered)

        let received = try messages(sam, "Alice")
        for (id, content) in zip(ids, items) {
            let item = try XCTUnwrap(received.first { $0.id == id }, "\(content)")
            XCTAssertEqual(item.content, content, "stored as sent, key and hash included")
            XCTAssertEqual(item.direction, .incoming)
        }
        let shown = received.filter { ids.contains($0.id) }.map { ($0.showsAsRow, $0.text) }
        XCTAssertEqual(shown.map(\.0), [true, true, false])
        XCTAssertEqual(shown.map(\.1), [
            "They sent you a photo (beach.jpg), which this version of rChat cannot receive.",
            "They set disappearing messages to 1 hour. This version of rChat does not delete messages: they stay on this device.",
            "and text again",
        ])
        XCTAssertFalse(logLines.all.contains { $0.contains("rejected") }, logLines.all.joined(separator: "\n"))
    }

    func testThisVersionSendsTextOnly() throws {
        let address = try startRelay()
        let (alice, _) = try aliceAndInitiatingSam(relay: address)
        for content in [MessageContent.attachment(photo), .control(.timerChanged(.off))] {
            XCTAssertThrowsError(try alice.send(to: "Sam", content: content)) { error in
                XCTAssertEqual(error as? EngineError, .usage("this version of rChat sends text only"))
            }
        }
        XCTAssertEqual(try alice.conversation("Sam"), [], "nothing stored")
    }

    /// A first message travels as a message request: its content too, whole.
    func testAMessageRequestCarriesContent() throws {
        let address = try startRelay()
        let alice = try account("Alice", relay: address), sam = try account("Sam", relay: address)
        let aliceIdentity = try alice.identity(), samIdentity = try sam.identity()
        let code = aliceIdentity.contactCode(device: alice.device).text
        for content in [MessageContent.text("hi"), .attachment(photo), .control(.timerChanged(.fourWeeks))] {
            let request = MessageRequest(senderCode: code, messageID: .random(), createdAt: 7, content: content)
            let sealed = try request.sealed(from: aliceIdentity.accountKey, to: samIdentity.accountKey.publicKey)
            let opened = try XCTUnwrap(MessageRequest.open(sealed, account: samIdentity.accountKey), "\(content)")
            XCTAssertEqual(opened.request, request)
        }
    }
}
