import RChatCore
@testable import RChatCrypto
@testable import RChatEngine

/// Alice and Bob, each with a device, one conversation, and one session between them.
enum Sides {
    static let aliceIdentity = Handshake.LocalIdentity(account: Fixtures.alice, device: Fixtures.aliceDevice)
    static let bobIdentity = Handshake.LocalIdentity(account: Fixtures.bob, device: Fixtures.bobDevice)
    static let alicePinned = Handshake.PinnedKeys(accountKey: Fixtures.alice.publicKey, deviceKey: Fixtures.aliceDevice.publicKey)
    static let bobPinned = Handshake.PinnedKeys(accountKey: Fixtures.bob.publicKey, deviceKey: Fixtures.bobDevice.publicKey)
    static let aliceRole = Handshake.Role.of(myAccountKey: Fixtures.alice.publicKey, peerAccountKey: Fixtures.bob.publicKey)
    /// The initiator's and the responder's identities and the keys each pins.
    static var initiator: (Handshake.LocalIdentity, Handshake.PinnedKeys) { aliceRole == .initiator ? (aliceIdentity, bobPinned) : (bobIdentity, alicePinned) }
    static var responder: (Handshake.LocalIdentity, Handshake.PinnedKeys) { aliceRole == .initiator ? (bobIdentity, alicePinned) : (aliceIdentity, bobPinned) }

    static let sessionID = [UInt8](repeating: 9, count: SessionKeys.sessionIDBytes)

    /// Alice's and Bob's saved states with one session between them (a real handshake).
    static let states: (alice: SavedSessionState, bob: SavedSessionState) = {
        let (iMe, iPeer) = initiator, (rMe, rPeer) = responder
        let i = try! Handshake.Initiator(me: iMe, peer: iPeer, reconnectCounter: 0)
        let (reply, responderSession) = try! Handshake.Responder(me: rMe, peer: rPeer, reconnectCounter: 0).respond(to: i.firstMessage())
        let initiatorSession = try! i.finish(reply)
        let (aliceSession, bobSession) = aliceRole == .initiator ? (initiatorSession, responderSession) : (responderSession, initiatorSession)
        var alice = SavedSessionState(), bob = SavedSessionState()
        alice.begin(aliceSession, at: 0)
        bob.begin(bobSession, at: 0)
        return (alice, bob)
    }()
}

/// An envelope from the peer on a link: the link frame's padding and type, the header box
/// (its layout reached by sealing the input under the header key, as a peer would), the
/// body box, and what the engine reads first in a body (timers, receipt ids).
enum EnvelopeTarget: FuzzTarget {
    static let name = "envelope"

    static func run(_ input: [UInt8]) {
        if let frame = LinkFrame(input[...]) { precondition(LinkFrame(frame.encoded[...]).map(\.encoded) == frame.encoded) }
        _ = LinkFrame.envelopeBytes(in: input[...])
        if let header = try? Envelope.openHeader(input, conversation: Fixtures.bobConversation) {
            var bob = Sides.states.bob
            _ = try? bob.open(input, header: header, at: 0)
        }
        // The header layout (this version's and version 2's), as a genuine header box carries it.
        for version in [Envelope.version, Envelope.legacyVersion] {
            let headerBox = AEAD.sealWithRandomNonce(input, additionalData: [version], key: Fixtures.aliceConversation.sendHeaderKey)
            let frame = [version] + headerBox + [UInt8](repeating: 0, count: AEAD.tagBytes)
            if let header = try? Envelope.openHeader(frame, conversation: Fixtures.bobConversation) {
                precondition(header.encoded() == input, "an envelope header does not encode back to its bytes")
                // Whatever its ratchet header claims, opening it moves nothing when the body does not open.
                var bob = Sides.states.bob
                let before = bob.serialized()
                _ = try? bob.open(frame, header: header, at: 0)
                precondition(bob.serialized() == before, "a frame that did not open moved the ratchet")
            }
            if let header = try? EnvelopeHeader.decode(input, frameVersion: version) { precondition(header.encoded() == input) }
        }
        // A body the peer sealed opens to itself, whatever it holds, once.
        var alice = Sides.states.alice, bob = Sides.states.bob
        let sealed = alice.seal(kind: .message, messageID: MessageID(high: 1, low: 2), body: input, conversation: Fixtures.aliceConversation)!
        let header = try! Envelope.openHeader(sealed, conversation: Fixtures.bobConversation)
        precondition((try? bob.open(sealed, header: header, at: 0)) == input, "a sealed body does not open to itself")
        precondition((try? bob.open(sealed, header: header, at: 0)) == nil, "a sealed body opens twice")
        _ = Engine.receiptIDs(input)
    }

    static func seeds() -> [[UInt8]] {
        var alice = Sides.states.alice
        let sealed = alice.seal(kind: .message, messageID: MessageID(high: 1, low: 2), body: MessageContent.text("hi").encoded(),
                                conversation: Fixtures.aliceConversation)!
        let header = try! Envelope.openHeader(sealed, conversation: Fixtures.bobConversation)
        var receipts = ByteWriter()
        receipts.u16(2); receipts.raw(MessageID(high: 1, low: 2)); receipts.raw(MessageID(high: 3, low: 4))
        return [sealed, LinkFrame.envelope(sealed).encoded, header.encoded(), receipts.bytes]
    }
}

/// The session handshake's two messages: their split, the sealed payload's layout, and each
/// side reading the other's message with the real keys.
enum HandshakeTarget: FuzzTarget {
    static let name = "handshake"

    static func run(_ input: [UInt8]) {
        for number: UInt8 in [1, 2] {
            if let parts = try? Handshake.parse(input, messageNumber: number) {
                precondition(parts.header + parts.ephemeral + parts.sealedStatic + parts.sealed == input)
            }
        }
        if let (payload, body, signature) = try? HandshakePayload.decode(input) {
            precondition(payload.body() == body && body + signature == input, "a handshake payload does not encode back to its bytes")
        }
        let (me, peer) = Sides.responder
        let responder = try! Handshake.Responder(me: me, peer: peer, reconnectCounter: 1)
        _ = try? responder.respond(to: input)
        let (initiatorMe, initiatorPeer) = Sides.initiator
        let initiator = try! Handshake.Initiator(me: initiatorMe, peer: initiatorPeer, reconnectCounter: nil)
        _ = try? initiator.finish(input)
    }

    static func seeds() -> [[UInt8]] {
        let (me, peer) = Sides.initiator
        let initiator = try! Handshake.Initiator(me: me, peer: peer, reconnectCounter: 3, extensionBytes: [1, 2, 3])
        let (responderMe, responderPeer) = Sides.responder
        let reply = try! Handshake.Responder(me: responderMe, peer: responderPeer, reconnectCounter: nil).respond(to: initiator.firstMessage()).reply
        let payload = HandshakePayload(accountKey: Fixtures.alice.publicKey, deviceKey: Fixtures.aliceDevice.publicKey,
                                       deviceCertificate: [UInt8](repeating: 1, count: 64), startedOver: false, reconnectCounter: 7,
                                       extensionBytes: [4, 5])
        return [initiator.firstMessage(), reply, payload.body() + [UInt8](repeating: 2, count: 64)]
    }
}

/// A could-not-read notice from the peer's device: as it comes, and signed here with the
/// device key so that its layout is read past the signature.
enum CouldNotReadTarget: FuzzTarget {
    static let name = "could-not-read"

    static func run(_ input: [UInt8]) {
        let device = Fixtures.aliceDevice
        _ = try? CouldNotReadNotice.open(input, conversation: Fixtures.bobConversation, session: Sides.sessionID, signedBy: device.publicKey)
        let signed = input + device.sign(CouldNotReadNotice.signedMessage(input))
        for session in [Sides.sessionID, nil] {
            guard let notice = try? CouldNotReadNotice.open(signed, conversation: Fixtures.bobConversation, session: session,
                                                           signedBy: device.publicKey) else { continue }
            precondition(notice.signed(by: device) == signed, "a could-not-read notice does not encode back to its bytes")
        }
    }

    static func seeds() -> [[UInt8]] {
        let notice = CouldNotReadNotice(messageIDs: [MessageID(high: 1, low: 2), MessageID(high: 3, low: 4)],
                                        conversation: Fixtures.aliceConversation, session: Sides.sessionID, time: 1_800_000_000)
        let signed = notice.signed(by: Fixtures.aliceDevice)
        // The signed bytes, and the body alone (what `run` signs itself).
        return [signed, Array(signed.dropLast(SigningKey.signatureBytes))]
    }
}

/// A message request to one of this account's invite tokens: the padded payload as it comes,
/// and the input sealed to the account (as a sender seals it) so its layout — the sender's
/// code, the id, the content — is read.
enum MessageRequestTarget: FuzzTarget {
    static let name = "message-request"

    static func run(_ input: [UInt8]) {
        let account = Fixtures.bob
        _ = MessageRequest.open(input, account: account)
        let recipient = Signature.agreementPublicKey(fromSigningKey: account.publicKey)!
        let padded = Padding.padded(input, sizes: Padding.payloadSizes, outside: SealedBox.overheadBytes + Padding.trailerBytes)
        let box = try! SealedBox.seal(padded, to: recipient)
        _ = MessageRequest.open(Padding.padded(box, sizes: Padding.payloadSizes), account: account)
    }

    static func seeds() -> [[UInt8]] {
        let code = Fixtures.code("Alice", Fixtures.alice, Fixtures.aliceDevice)
        let request = MessageRequest(senderCode: code.text, messageID: MessageID(high: 1, low: 2), createdAt: 1_800_000_000,
                                     content: .text("hello, it's Alice"))
        let sealed = try! request.sealed(from: Fixtures.alice, to: Fixtures.bob.publicKey)
        // The plaintext `sealed` seals, as `run` seals it again.
        let opened = try! Padding.unpadded(SealedBox.open(try! Padding.unpadded(sealed), with: Fixtures.bob.agreementKey()))
        return [sealed, opened]
    }
}
