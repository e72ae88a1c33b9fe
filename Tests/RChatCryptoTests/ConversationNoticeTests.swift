import XCTest
import RChatCore
@testable import RChatCrypto

final class ConversationNoticeTests: XCTestCase {
    let pair = ConvPair.make(1)
    lazy var reporter = pair.responder                                  // lost its state
    lazy var reporterView = reporter.conversation(with: pair.initiator)
    lazy var senderView = pair.initiator.conversation(with: reporter)   // reads the notice
    let ids = (1...3).map { MessageID(bytes: [UInt8](repeating: $0, count: 16))! }
    let now: Int64 = 1_800_000_000
    let session = [UInt8](repeating: 7, count: SessionKeys.sessionIDBytes)

    func testVerifiesWithTheDeviceKeyThatSignedIt() throws {
        let cases: [(name: String, ids: [MessageID])] = [
            ("three ids", ids), ("one id", [ids[0]]), ("none", []),
            ("the most", (0..<CouldNotReadNotice.maxMessageIDs).map { _ in MessageID.random() }),
        ]
        for c in cases {
            let bytes = CouldNotReadNotice(messageIDs: c.ids, conversation: reporterView, session: session, time: now).signed(by: reporter.device)
            let notice = try CouldNotReadNotice.open(bytes, conversation: senderView, session: session, signedBy: reporter.device.publicKey)
            XCTAssertEqual(notice.messageIDs, c.ids, c.name)
            XCTAssertEqual(notice.time, now, c.name)
            XCTAssertEqual(notice.conversationTag, senderView.tag, c.name)
        }
        XCTAssertLessThanOrEqual(
            CouldNotReadNotice(messageIDs: (0..<CouldNotReadNotice.maxMessageIDs).map { _ in MessageID.random() },
                               conversation: reporterView, session: session, time: now).signed(by: reporter.device).count,
            HandshakePayload.maxExtensionBytes, "the largest notice fits a handshake extension")
    }

    func testOtherSignersDoNotVerify() {
        let stranger = SigningKey.generate()
        let cases: [(name: String, signer: SigningKey)] = [
            ("the reporter's account key (a stolen account copy)", reporter.account),
            ("another device key", stranger),
            ("the reader's own device key", pair.initiator.device),
        ]
        for c in cases {
            let bytes = CouldNotReadNotice(messageIDs: ids, conversation: reporterView, session: session, time: now).signed(by: c.signer)
            XCTAssertThrowsError(try CouldNotReadNotice.open(bytes, conversation: senderView, session: session, signedBy: reporter.device.publicKey), c.name) {
                XCTAssertEqual($0 as? CouldNotReadNoticeError, .badSignature, c.name)
            }
        }
    }

    func testAlteredNoticesFail() throws {
        let bytes = CouldNotReadNotice(messageIDs: ids, conversation: reporterView, session: session, time: now).signed(by: reporter.device)
        for index in bytes.indices {
            var bad = bytes
            bad[index] ^= 0x01
            XCTAssertThrowsError(try CouldNotReadNotice.open(bad, conversation: senderView, session: session, signedBy: reporter.device.publicKey), "byte \(index)")
        }
        // Swapping an id for another is caught by the signature.
        let idStart = 1 + ConversationSecret.tagBytes + SessionKeys.sessionIDBytes + 8 + 2
        var swapped = bytes
        swapped.replaceSubrange(idStart..<idStart + 16, with: MessageID.random().bytes)
        XCTAssertThrowsError(try CouldNotReadNotice.open(swapped, conversation: senderView, session: session, signedBy: reporter.device.publicKey)) {
            XCTAssertEqual($0 as? CouldNotReadNoticeError, .badSignature)
        }
        XCTAssertThrowsError(try CouldNotReadNotice.open(Array(bytes.dropLast()), conversation: senderView, session: session, signedBy: reporter.device.publicKey))
        XCTAssertThrowsError(try CouldNotReadNotice.open([], conversation: senderView, session: session, signedBy: reporter.device.publicKey)) {
            XCTAssertEqual($0 as? CouldNotReadNoticeError, .malformed)
        }
        XCTAssertThrowsError(try CouldNotReadNotice.open([9] + bytes.dropFirst(), conversation: senderView, session: session, signedBy: reporter.device.publicKey)) {
            XCTAssertEqual($0 as? CouldNotReadNoticeError, .unsupportedVersion(9))
        }
    }

    func testBoundToTheConversation() {
        let other = ConvPair.make(90)
        // The reporter's device signs a notice about another conversation it is in.
        let elsewhere = reporter.conversation(with: other.initiator)
        let bytes = CouldNotReadNotice(messageIDs: ids, conversation: elsewhere, session: session, time: now).signed(by: reporter.device)
        XCTAssertThrowsError(try CouldNotReadNotice.open(bytes, conversation: senderView, session: session, signedBy: reporter.device.publicKey)) {
            XCTAssertEqual($0 as? CouldNotReadNoticeError, .otherConversation)
        }
    }

    /// A notice is read only in the session it was written for: the relay delivering it
    /// again in a later session (whose receive keys still open the old envelope) gets nothing.
    func testBoundToTheSession() throws {
        let bytes = CouldNotReadNotice(messageIDs: ids, conversation: reporterView, session: session, time: now).signed(by: reporter.device)
        let cases: [(name: String, current: [UInt8]?)] = [
            ("a later session", [UInt8](repeating: 8, count: SessionKeys.sessionIDBytes)),
            ("no session yet", nil),
        ]
        for c in cases {
            XCTAssertThrowsError(try CouldNotReadNotice.open(bytes, conversation: senderView, session: c.current,
                                                             signedBy: reporter.device.publicKey), c.name) {
                XCTAssertEqual($0 as? CouldNotReadNoticeError, .otherSession, c.name)
            }
        }
        XCTAssertEqual(try CouldNotReadNotice.open(bytes, conversation: senderView, session: session, signedBy: reporter.device.publicKey).sessionID,
                       session)
    }

    /// The path the engine takes: a reinstalled side reads ids from headers it cannot open,
    /// and in the first session after it, sends a notice signed by its device key for that
    /// session; the sender verifies it with the pinned key in the same session, and not in
    /// the next one.
    func testNoticeTravelsInTheSessionAfterASideStartedOver() throws {
        var oldA = try pair.handshake().0.started
        let frames = ids.map { id in oldA.seal(kind: .message, messageID: id, body: [1], conversation: senderView)! }
        // The reporter reinstalled: same account and device key, no saved state.
        let reinstalled = ConvParty(accountSeed: reporter.accountSeed, deviceSeed: 101)
        XCTAssertEqual(reinstalled.device.publicKey, reporter.device.publicKey)
        let unread = try frames.map { try Envelope.openHeader($0, conversation: reinstalled.conversation(with: pair.initiator)).messageID }

        let i = try Handshake.Initiator(me: pair.initiator.identity, peer: reporter.pinned, reconnectCounter: 1)
        let r = try Handshake.Responder(me: reinstalled.identity, peer: pair.initiator.pinned, reconnectCounter: nil)
        let (reply, reporterSession) = try r.respond(to: i.firstMessage())
        let senderSession = try i.finish(reply)
        XCTAssertTrue(senderSession.peer.startedOver)
        XCTAssertTrue(senderSession.peer.deviceKeyIsPinned)
        let notice = CouldNotReadNotice(messageIDs: unread, conversation: reinstalled.conversation(with: pair.initiator),
                                        session: reporterSession.id, time: now).signed(by: reinstalled.device)
        let opened = try CouldNotReadNotice.open(notice, conversation: senderView, session: senderSession.id, signedBy: reporter.pinned.deviceKey)
        XCTAssertEqual(opened.messageIDs, ids)

        let (next, _) = try pair.handshake()
        XCTAssertThrowsError(try CouldNotReadNotice.open(notice, conversation: senderView, session: next.id, signedBy: reporter.pinned.deviceKey)) {
            XCTAssertEqual($0 as? CouldNotReadNoticeError, .otherSession)
        }
    }
}
