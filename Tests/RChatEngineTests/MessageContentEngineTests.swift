import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatStore
@testable import RChatEngine

/// Content through two real engines and a real relay: what the outbox holds is what the
/// other side stores, byte for byte. A timer change that arrives (as a later version will
/// send them) is kept whole and shown as a row.
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

        // A file, through sendFile; a timer change, which nothing in this version sends, written
        // to Alice's outbox as a later version would; then text.
        let path = directory.appendingPathComponent("beach.jpg").path
        try Data((0..<2_345_678).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: path))
        let fileID = try alice.sendFile(to: "Sam", path: path, as: .file)
        let samID = try XCTUnwrap(alice.store.contact(named: "Sam")).id
        var ids = [fileID]
        for content in [MessageContent.control(.timerChanged(.oneHour)), .text("and text again")] {
            let id = MessageID.random()
            try alice.store.insertOutgoing(contact: samID, id: id, content: content, at: Int64(Date().timeIntervalSince1970))
            ids.append(id)
        }
        aliceEngine.engine.wake()
        try waitForStatus(alice, "Sam", ids, .delivered)

        let sent = try messages(alice, "Sam")
        let received = try messages(sam, "Alice")
        for id in ids {
            let mine = try XCTUnwrap(sent.first { $0.id == id })
            let item = try XCTUnwrap(received.first { $0.id == id })
            XCTAssertEqual(item.content, mine.content, "stored as sent, key and hash included")
            XCTAssertEqual(item.direction, .incoming)
        }
        let shown = received.filter { ids.contains($0.id) }.map { ($0.showsAsRow, $0.text) }
        XCTAssertEqual(shown.map(\.0), [false, true, false])
        XCTAssertEqual(shown.map(\.1), [
            "File: beach.jpg (2.2 MB)",
            "Alice set disappearing messages to 1 hour.",
            "and text again",
        ])
        XCTAssertFalse(logLines.all.contains { $0.contains("rejected") }, logLines.all.joined(separator: "\n"))
    }

    func testOnlyTextIsSentAsContentFilesGoThroughSendFile() throws {
        let address = try startRelay()
        let (alice, _) = try aliceAndInitiatingSam(relay: address)
        let refusals: [(MessageContent, String)] = [
            (.attachment(photo), "a file is sent from its path: rchat send NAME --file PATH"),
            (.control(.timerChanged(.off)), "this version of rChat does not send timer changes"),
        ]
        for (content, refusal) in refusals {
            XCTAssertThrowsError(try alice.send(to: "Sam", content: content)) { error in
                XCTAssertEqual(error as? EngineError, .usage(refusal))
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
