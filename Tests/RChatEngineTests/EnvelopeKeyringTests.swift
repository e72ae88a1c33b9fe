import XCTest
import RChatCore
import RChatCrypto
import RChatWire
import RChatStore
@testable import RChatEngine

/// Envelopes opened on the reader thread: with the keys published, for the codes published
/// and for codes of earlier runs (learned), and never with keys no longer published.
final class EnvelopeKeyringTests: XCTestCase {
    let sam = SigningKey.generate(), me = SigningKey.generate()
    lazy var samSide = try! ConversationSecret(myAccount: sam, peerAccountKey: me.publicKey)
    lazy var mySide = try! ConversationSecret(myAccount: me, peerAccountKey: sam.publicKey)
    let sessionID = [UInt8](repeating: 4, count: SessionKeys.sessionIDBytes)
    let samToMe = SecretBytes(count: AEAD.keyBytes) { $0.initialize(repeating: 7, count: AEAD.keyBytes) }
    let meToSam = SecretBytes(count: AEAD.keyBytes) { $0.initialize(repeating: 8, count: AEAD.keyBytes) }
    let code = [UInt8](repeating: 1, count: 32), oldCode = [UInt8](repeating: 2, count: 32)

    private func delivery(_ text: String, id: MessageID, code: [UInt8]) -> Delivery {
        // A frame of a session from before the ratchet (version 2): what the reader threads open.
        let header = EnvelopeHeader(kind: .message, messageID: id, sequence: 3, sessionID: sessionID, ratchet: nil)
        let envelope = Envelope.seal(header, body: MessageContent.text(text).encoded(), key: samToMe, senderRole: .initiator, conversation: samSide)
        return Delivery(id: 1, heldAt: 5, link: nil, origin: .link(code: code),
                        payload: LinkFrame.envelope(envelope).encoded)
    }

    private func entry(keys: [ReceiveKey]) -> EnvelopeKeyring.Entry {
        EnvelopeKeyring.Entry(contact: ContactID(3), secret: mySide, keys: keys)
    }

    func testOpensWithThePublishedKeysForPresentedAndEarlierCodes() throws {
        let keyring = EnvelopeKeyring()
        let id = MessageID.random()
        XCTAssertNil(keyring.open(delivery("hi", id: id, code: code)), "nothing published yet")
        let receive = ReceiveKey(sessionID: sessionID, senderRole: .initiator, key: samToMe)
        keyring.publish([entry(keys: [receive])], codes: [HashedBytes(code): ContactID(3)])

        let opened = try XCTUnwrap(keyring.open(delivery("hi Sam", id: id, code: code)))
        XCTAssertEqual(opened.contact, ContactID(3))
        XCTAssertEqual(opened.header.messageID, id)
        XCTAssertEqual(opened.content, .text("hi Sam"))
        XCTAssertEqual(opened.body, MessageContent.text("hi Sam").encoded(), "the body is what the store keeps")
        XCTAssertTrue(opened.sessionKey === samToMe)
        XCTAssertTrue(opened.secretKey === mySide.key)
        // Held under a code of an earlier run: found by its header key, then remembered.
        XCTAssertEqual(keyring.open(delivery("older", id: .random(), code: oldCode))?.content, .text("older"))
        XCTAssertEqual(keyring.open(delivery("older 2", id: .random(), code: oldCode))?.content, .text("older 2"))
    }

    func testWithoutTheSessionKeyOrWithAnotherSecretNothingOpens() {
        let keyring = EnvelopeKeyring()
        keyring.publish([entry(keys: [])], codes: [HashedBytes(code): ContactID(3)])
        XCTAssertNil(keyring.open(delivery("hi", id: .random(), code: code)), "the session's key is not published")
        let stranger = try! ConversationSecret(myAccount: me, peerAccountKey: SigningKey.generate().publicKey)
        keyring.publish([EnvelopeKeyring.Entry(contact: ContactID(3), secret: stranger,
                                               keys: [ReceiveKey(sessionID: sessionID, senderRole: .initiator, key: samToMe)])],
                        codes: [HashedBytes(code): ContactID(3)])
        XCTAssertNil(keyring.open(delivery("hi", id: .random(), code: code)), "another conversation's header key")
        var garbage = delivery("hi", id: .random(), code: code)
        garbage = Delivery(id: 1, heldAt: 5, link: nil, origin: garbage.origin, payload: [3, 1, 2, 3])
        XCTAssertNil(keyring.open(garbage))
    }

    /// A backlog comes in with the connection, before the engine has presented its codes:
    /// the conversations published at start open it.
    func testOpensBeforeAnyCodeIsPublishedAndAfterTheCodesChange() {
        let keyring = EnvelopeKeyring()
        let receive = ReceiveKey(sessionID: sessionID, senderRole: .initiator, key: samToMe)
        keyring.publish([entry(keys: [receive])], codes: [:])
        XCTAssertEqual(keyring.open(delivery("early", id: .random(), code: oldCode))?.content, .text("early"))
        keyring.publish([entry(keys: [receive])], codes: [HashedBytes(code): ContactID(3)])
        XCTAssertEqual(keyring.open(delivery("later", id: .random(), code: oldCode))?.content, .text("later"), "the learned code outlives a publish")
        keyring.publish([], codes: [:])
        XCTAssertNil(keyring.open(delivery("gone", id: .random(), code: oldCode)), "a conversation no longer published")
    }

    /// A ratchet's frame opens only with a published key ahead of the receiving chain, the
    /// key the engine's own ratchet then takes for it; one past the window does not open.
    func testARatchetsFrameOpensWithTheKeysAheadOnly() throws {
        let samID = Handshake.LocalIdentity(account: sam, device: SigningKey.generate())
        let myID = Handshake.LocalIdentity(account: me, device: SigningKey.generate())
        let samPinned = Handshake.PinnedKeys(accountKey: sam.publicKey, deviceKey: samID.device.publicKey)
        let myPinned = Handshake.PinnedKeys(accountKey: me.publicKey, deviceKey: myID.device.publicKey)
        let samInitiates = Handshake.Role.of(myAccountKey: sam.publicKey, peerAccountKey: me.publicKey) == .initiator
        let i = try Handshake.Initiator(me: samInitiates ? samID : myID, peer: samInitiates ? myPinned : samPinned, reconnectCounter: 0)
        let (reply, responderSession) = try Handshake.Responder(me: samInitiates ? myID : samID, peer: samInitiates ? samPinned : myPinned,
                                                                 reconnectCounter: 0).respond(to: i.firstMessage())
        let initiatorSession = try i.finish(reply)
        var samState = SavedSessionState(), myState = SavedSessionState()
        samState.begin(samInitiates ? initiatorSession : responderSession, at: 0)
        myState.begin(samInitiates ? responderSession : initiatorSession, at: 0)
        let frames = (0..<4).map { samState.seal(kind: .message, messageID: .random(), body: MessageContent.text("m\($0)").encoded(), conversation: samSide)! }
        func delivery(_ frame: [UInt8]) -> Delivery {
            Delivery(id: 1, heldAt: 5, link: nil, origin: .link(code: code), payload: LinkFrame.envelope(frame).encoded)
        }
        let keyring = EnvelopeKeyring()
        var entry = EnvelopeKeyring.Entry(contact: ContactID(3), secret: mySide, keys: [])
        keyring.publish([entry], codes: [HashedBytes(code): ContactID(3)])
        XCTAssertNil(keyring.open(delivery(frames[0])), "no keys ahead published: the engine opens it")
        _ = try myState.open(frames[0], header: Envelope.openHeader(frames[0], conversation: mySide), at: 0)
        let session = try Envelope.openHeader(frames[0], conversation: mySide).sessionID
        let (role, ahead) = try XCTUnwrap(myState.lookahead(session: session, upTo: 2, continuing: nil))
        entry.ahead = EnvelopeKeyring.Ahead(sessionID: session, senderRole: role, keys: ahead)
        keyring.publish([entry], codes: [HashedBytes(code): ContactID(3)])
        for n in 1...2 {
            let opened = try XCTUnwrap(keyring.open(delivery(frames[n])), "frame \(n)")
            XCTAssertEqual(opened.content, .text("m\(n)"))
            XCTAssertTrue(try myState.takeKey(opened.header, at: 0).sameBytes(as: opened.sessionKey), "the key the engine takes")
        }
        XCTAssertNil(keyring.open(delivery(frames[3])), "past the window")
    }
}
