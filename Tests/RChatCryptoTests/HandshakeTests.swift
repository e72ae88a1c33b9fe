import XCTest
import RChatCore
@testable import RChatCrypto

final class HandshakeTests: XCTestCase {
    let pair = ConvPair.make(1)

    func testBothSidesDeriveMatchingKeys() throws {
        let cases: [(name: String, i: UInt64?, r: UInt64?, iExt: [UInt8], rExt: [UInt8], prologue: [UInt8], next: UInt64)] = [
            ("first session", 0, 0, [], [], [], 1),
            ("counters one apart", 5, 6, Array("hello".utf8), [], Array("link 7".utf8), 7),
            ("initiator started over", nil, 3, [UInt8](repeating: 0xaa, count: 1000), [1], [], 4),
            ("responder started over, largest extension", 9, nil, [], [UInt8](repeating: 0x55, count: 65_535), [], 10),
            ("both started over", nil, nil, [], [], [], 1),
        ]
        for c in cases {
            let (i, r) = try pair.handshake(initiatorCounter: c.i, responderCounter: c.r,
                                            initiatorExtension: c.iExt, responderExtension: c.rExt, prologue: c.prologue)
            XCTAssertEqual(i.id, r.id, c.name)
            XCTAssertEqual(i.id.count, SessionKeys.sessionIDBytes)
            XCTAssertEqual(i.keys.sendKey.testBytes, r.keys.receiveKey.testBytes, c.name)
            XCTAssertEqual(i.keys.receiveKey.testBytes, r.keys.sendKey.testBytes, c.name)
            XCTAssertNotEqual(i.keys.sendKey.testBytes, i.keys.receiveKey.testBytes, c.name)
            XCTAssertEqual(i.keys.role, .initiator)
            XCTAssertEqual(r.keys.role, .responder)
            XCTAssertEqual(i.nextReconnectCounter, c.next, c.name)
            XCTAssertEqual(r.nextReconnectCounter, c.next, c.name)
            // What each learned about the other.
            XCTAssertEqual(i.peer, VerifiedPeer(accountKey: pair.responder.account.publicKey, deviceKey: pair.responder.device.publicKey,
                                                deviceKeyIsPinned: true, startedOver: c.r == nil, reconnectCounter: c.r, extensionBytes: c.rExt), c.name)
            XCTAssertEqual(r.peer, VerifiedPeer(accountKey: pair.initiator.account.publicKey, deviceKey: pair.initiator.device.publicKey,
                                                deviceKeyIsPinned: true, startedOver: c.i == nil, reconnectCounter: c.i, extensionBytes: c.iExt), c.name)
        }
    }

    func testEverySessionIsFresh() throws {
        let (a, _) = try pair.handshake()
        let (b, _) = try pair.handshake()
        XCTAssertNotEqual(a.id, b.id)
        XCTAssertNotEqual(a.keys.sendKey.testBytes, b.keys.sendKey.testBytes)
    }

    func testRolesComeFromKeyOrder() {
        for n in [UInt8(1), 33, 77, 150] {
            let p = ConvPair.make(n)
            let a = p.initiator.account.publicKey, b = p.responder.account.publicKey
            // Two sides linked at the same moment: exactly one initiates.
            XCTAssertEqual(Handshake.Role.of(myAccountKey: a, peerAccountKey: b), .initiator)
            XCTAssertEqual(Handshake.Role.of(myAccountKey: b, peerAccountKey: a), .responder)
            XCTAssertThrowsError(try Handshake.Initiator(me: p.responder.identity, peer: p.initiator.pinned, reconnectCounter: 0)) {
                XCTAssertEqual($0 as? HandshakeError, .wrongRole)
            }
            XCTAssertThrowsError(try Handshake.Responder(me: p.initiator.identity, peer: p.responder.pinned, reconnectCounter: 0)) {
                XCTAssertEqual($0 as? HandshakeError, .wrongRole)
            }
        }
        XCTAssertThrowsError(try Handshake.Initiator(me: pair.initiator.identity, peer: pair.initiator.pinned, reconnectCounter: 0))
    }

    func testTamperingAnyByteFails() throws {
        let i = try Handshake.Initiator(me: pair.initiator.identity, peer: pair.responder.pinned, reconnectCounter: 0)
        let r = try Handshake.Responder(me: pair.responder.identity, peer: pair.initiator.pinned, reconnectCounter: 0)
        let first = i.firstMessage()
        for index in first.indices {
            for bit in [UInt8(0x01), 0x80] {
                var bad = first
                bad[index] ^= bit
                XCTAssertThrowsError(try r.respond(to: bad), "first message byte \(index)")
            }
        }
        let (reply, _) = try r.respond(to: first)
        for index in reply.indices {
            for bit in [UInt8(0x01), 0x80] {
                var bad = reply
                bad[index] ^= bit
                XCTAssertThrowsError(try i.finish(bad), "reply byte \(index)")
            }
        }
        // The untouched reply still finishes: a failed attempt leaves the initiator usable.
        XCTAssertNoThrow(try i.finish(reply))
    }

    func testErrorsForShapeAndVersion() throws {
        let i = try Handshake.Initiator(me: pair.initiator.identity, peer: pair.responder.pinned, reconnectCounter: 0)
        let r = try Handshake.Responder(me: pair.responder.identity, peer: pair.initiator.pinned, reconnectCounter: 0)
        let first = i.firstMessage()
        var v6 = first; v6[0] = 6
        let cases: [(name: String, message: [UInt8], error: HandshakeError)] = [
            ("empty", [], .malformed),
            ("header only", Array(first.prefix(2)), .malformed),
            ("truncated payload", Array(first.dropLast()), .decryptionFailed),
            ("extra byte", first + [0], .decryptionFailed),
            ("future version", v6, .unsupportedVersion(6)),
            ("reply where a first message belongs", try r.respond(to: first).reply, .malformed),
            ("prologue differs", try Handshake.Initiator(me: pair.initiator.identity, peer: pair.responder.pinned,
                                                         reconnectCounter: 0, prologue: [9]).firstMessage(), .decryptionFailed),
        ]
        for c in cases {
            XCTAssertThrowsError(try r.respond(to: c.message), c.name) { XCTAssertEqual($0 as? HandshakeError, c.error, c.name) }
        }
        XCTAssertThrowsError(try i.finish(first)) { XCTAssertEqual($0 as? HandshakeError, .malformed) }
    }

    /// Payloads crafted with the internals, to reach each check after decryption.
    func testPayloadChecksGiveTypedErrors() throws {
        let me = pair.initiator, you = pair.responder
        let other = ConvParty(accountSeed: 200, deviceSeed: 201)
        func payload(account: [UInt8]? = nil, device: SigningKey? = nil, certifiedBy: SigningKey? = nil, version: UInt8 = Handshake.protocolVersion) -> HandshakePayload {
            let d = device ?? me.device
            return HandshakePayload(version: version, accountKey: account ?? me.account.publicKey, deviceKey: d.publicKey,
                                    deviceCertificate: DeviceCertificate.issue(deviceKey: d.publicKey, account: certifiedBy ?? me.account),
                                    startedOver: false, reconnectCounter: 1, extensionBytes: [])
        }
        let cases: [(name: String, payload: HandshakePayload, signer: SigningKey, error: HandshakeError?)] = [
            ("crafted like the real thing", payload(), me.device, nil),
            ("payload names an account key other than the sealed one",
             payload(account: other.account.publicKey, device: other.device, certifiedBy: other.account), other.device, .malformed),
            ("certificate by another account", payload(certifiedBy: other.account), me.device, .badCertificate),
            ("certificate by the device itself", payload(certifiedBy: me.device), me.device, .badCertificate),
            ("signed by another device key", payload(), other.device, .badSignature),
            ("signed by the account key", payload(), me.account, .badSignature),
            ("new device, certified, signs", payload(device: other.device), other.device, nil),
            ("future payload version", payload(version: 6), me.device, .unsupportedVersion(6)),
        ]
        let r = try Handshake.Responder(me: you.identity, peer: me.pinned, reconnectCounter: 0)
        for c in cases {
            let message = craftFirstMessage(staticAccount: me.account, responderAccountKey: you.account.publicKey, payload: c.payload, signer: c.signer)
            if let expected = c.error {
                XCTAssertThrowsError(try r.respond(to: message), c.name) { XCTAssertEqual($0 as? HandshakeError, expected, c.name) }
            } else {
                let session = try r.respond(to: message).session
                XCTAssertEqual(session.peer.deviceKeyIsPinned, c.payload.deviceKey == me.device.publicKey, c.name)
            }
        }
    }

    /// The same checks for the reply, which the initiator reads.
    func testReplyChecksGiveTypedErrors() throws {
        let me = pair.initiator, you = pair.responder
        let other = ConvParty(accountSeed: 210, deviceSeed: 211)
        let cases: [(name: String, account: [UInt8], device: SigningKey, certifiedBy: SigningKey, signer: SigningKey, error: HandshakeError?)] = [
            ("crafted like the real thing", you.account.publicKey, you.device, you.account, you.device, nil),
            // The reply's keys come from the first message's "es": only the pinned responder
            // can make one, so a payload naming another account is malformed, not a mismatch.
            ("another account key named", other.account.publicKey, other.device, other.account, other.device, .malformed),
            ("certificate by another account", you.account.publicKey, you.device, other.account, you.device, .badCertificate),
            ("signed by the account key", you.account.publicKey, you.device, you.account, you.account, .badSignature),
        ]
        for c in cases {
            let i = try Handshake.Initiator(me: me.identity, peer: you.pinned, reconnectCounter: 0)
            let p = HandshakePayload(accountKey: c.account, deviceKey: c.device.publicKey,
                                     deviceCertificate: DeviceCertificate.issue(deviceKey: c.device.publicKey, account: c.certifiedBy),
                                     startedOver: true, reconnectCounter: 0, extensionBytes: [])
            let reply = craftReply(to: i.firstMessage(), staticAccount: you.account, initiatorAccountKey: me.account.publicKey, payload: p, signer: c.signer)
            if let expected = c.error {
                XCTAssertThrowsError(try i.finish(reply), c.name) { XCTAssertEqual($0 as? HandshakeError, expected, c.name) }
            } else {
                XCTAssertTrue(try i.finish(reply).peer.startedOver, c.name)
            }
        }
    }

    func testAnotherAccountKeyIsProvedAndReportedAsKeysDontMatch() throws {
        let me = pair.initiator, you = pair.responder
        // Someone on the link under an account key of their own, with everything consistent:
        // the first message opens and proves that key, and gets no answer.
        let impostor = (220...250).lazy.map { ConvParty(accountSeed: UInt8($0), deviceSeed: 221) }
            .first { bytesPrecede($0.account.publicKey, you.account.publicKey) }!
        let p = HandshakePayload(accountKey: impostor.account.publicKey, deviceKey: impostor.device.publicKey,
                                 deviceCertificate: impostor.identity.deviceCertificate, startedOver: false, reconnectCounter: 0, extensionBytes: [])
        let r = try Handshake.Responder(me: you.identity, peer: me.pinned, reconnectCounter: 0)
        let own = craftFirstMessage(staticAccount: impostor.account, responderAccountKey: you.account.publicKey, payload: p, signer: impostor.device)
        XCTAssertThrowsError(try r.respond(to: own)) {
            XCTAssertEqual($0 as? HandshakeError, .keysDontMatch(presentedAccountKey: impostor.account.publicKey))
        }
        // The same through the public API: an Initiator whose pinned responder is `you`.
        let other = try Handshake.Initiator(me: impostor.identity, peer: you.pinned, reconnectCounter: nil)
        XCTAssertThrowsError(try r.respond(to: other.firstMessage())) {
            XCTAssertEqual($0 as? HandshakeError, .keysDontMatch(presentedAccountKey: impostor.account.publicKey))
        }
        // Not proved, never a mismatch: certificate or signature by another key.
        let unsigned = craftFirstMessage(staticAccount: impostor.account, responderAccountKey: you.account.publicKey, payload: p, signer: me.device)
        XCTAssertThrowsError(try r.respond(to: unsigned)) { XCTAssertEqual($0 as? HandshakeError, .badSignature) }
    }

    func testWrongStaticKeyFails() throws {
        let me = pair.initiator, you = pair.responder
        // An impostor that does not hold the pinned account key, claiming it: "ss" differs.
        let impostor = ConvParty(accountSeed: 220, deviceSeed: 221)
        let p = HandshakePayload(accountKey: me.account.publicKey, deviceKey: impostor.device.publicKey,
                                 deviceCertificate: impostor.identity.deviceCertificate, startedOver: false, reconnectCounter: 0, extensionBytes: [])
        let message = craftFirstMessage(staticAccount: impostor.account, responderAccountKey: you.account.publicKey,
                                        payload: p, signer: impostor.device, sealedAccountKey: me.account.publicKey)
        let r = try Handshake.Responder(me: you.identity, peer: me.pinned, reconnectCounter: 0)
        XCTAssertThrowsError(try r.respond(to: message)) { XCTAssertEqual($0 as? HandshakeError, .decryptionFailed) }

        // The initiator pinned a responder key the other side does not hold.
        let pinnedWrong = Handshake.PinnedKeys(accountKey: you.account.publicKey, deviceKey: you.device.publicKey)
        let i = try Handshake.Initiator(me: me.identity, peer: pinnedWrong, reconnectCounter: 0)
        let notYou = (230...250).lazy.map { ConvParty(accountSeed: UInt8($0), deviceSeed: 1) }
            .first { bytesPrecede(me.account.publicKey, $0.account.publicKey) }!
        let r2 = try Handshake.Responder(me: notYou.identity, peer: me.pinned, reconnectCounter: 0)
        XCTAssertThrowsError(try r2.respond(to: i.firstMessage())) { XCTAssertEqual($0 as? HandshakeError, .decryptionFailed) }
    }

    func testNewDeviceIsReportedVerifiedButUnpinned() throws {
        let me = pair.initiator, you = pair.responder
        // The contact reinstalled on a new machine with its account export: new device key.
        let newPhone = Handshake.LocalIdentity(account: you.account, device: ConvParty.key(240))
        let i = try Handshake.Initiator(me: me.identity, peer: you.pinned, reconnectCounter: 4)
        let r = try Handshake.Responder(me: newPhone, peer: me.pinned, reconnectCounter: nil)
        let (reply, rs) = try r.respond(to: i.firstMessage())
        let s = try i.finish(reply)
        XCTAssertFalse(s.peer.deviceKeyIsPinned)
        XCTAssertEqual(s.peer.deviceKey, newPhone.device.publicKey)
        XCTAssertTrue(s.peer.startedOver)
        XCTAssertEqual(s.nextReconnectCounter, 5)
        XCTAssertEqual(rs.nextReconnectCounter, 5)
        XCTAssertTrue(rs.peer.deviceKeyIsPinned)
    }

    func testReplayedFirstMessageYieldsNothingUsable() throws {
        let me = pair.initiator, you = pair.responder
        let conversation = you.conversation(with: me)
        let i = try Handshake.Initiator(me: me.identity, peer: you.pinned, reconnectCounter: 0)
        let first = i.firstMessage()
        let (reply, original) = try Handshake.Responder(me: you.identity, peer: me.pinned, reconnectCounter: 0).respond(to: first)
        let initiatorSession = try i.finish(reply)
        // The relay (or anyone) replays the first message to fresh responders later.
        var ids = Set([original.id])
        for _ in 0..<3 {
            let (replayReply, replayed) = try Handshake.Responder(me: you.identity, peer: me.pinned, reconnectCounter: 1).respond(to: first)
            XCTAssertNotEqual(replayReply, reply)
            XCTAssertTrue(ids.insert(replayed.id).inserted, "a fresh responder ephemeral gives a fresh session")
            XCTAssertNotEqual(replayed.keys.sendKey.testBytes, original.keys.sendKey.testBytes)
            XCTAssertNotEqual(replayed.keys.receiveKey.testBytes, original.keys.receiveKey.testBytes)
            // What the responder sends in the replayed session cannot be read with the
            // original session's keys.
            var replayedState = replayed.started
            let frame = try XCTUnwrap(replayedState.seal(kind: .message, messageID: MessageID.random(), body: [1, 2, 3], conversation: conversation))
            let header = try Envelope.openHeader(frame, conversation: me.conversation(with: you))
            let relabelled = EnvelopeHeader(kind: header.kind, messageID: header.messageID, sequence: header.sequence,
                                            sessionID: initiatorSession.id, ratchet: header.ratchet)
            var initiatorState = initiatorSession.started
            XCTAssertThrowsError(try initiatorState.open(frame, header: header, at: 0))
            XCTAssertThrowsError(try initiatorState.open(frame, header: relabelled, at: 0))
        }
    }

    /// The relay keeps a first message and delivers it on a later link: that link was made
    /// on another rendezvous code (another reconnect, another day), so the first message,
    /// bound to the code of its own link, does not decrypt there.
    func testFirstMessageIsBoundToTheLinkItWasSentOn() throws {
        let me = pair.initiator, you = pair.responder
        let secret = me.conversation(with: you)
        let codes = [RendezvousCode.reconnect(secret, day: 20_000, counter: 4), RendezvousCode.reconnect(secret, day: 20_000, counter: 5),
                     RendezvousCode.reconnect(secret, day: 20_001, counter: 4), RendezvousCode.recovery(secret, day: 20_000)]
        let captured = try Handshake.Initiator(me: me.identity, peer: you.pinned, reconnectCounter: 4,
                                               prologue: Handshake.linkPrologue(code: codes[0].bytes)).firstMessage()
        func responder(on code: RendezvousCode) throws -> Handshake.Responder {
            try Handshake.Responder(me: you.identity, peer: me.pinned, reconnectCounter: 4, prologue: Handshake.linkPrologue(code: code.bytes))
        }
        XCTAssertNoThrow(try responder(on: codes[0]).respond(to: captured), "on its own link it is a handshake")
        for code in codes.dropFirst() {
            XCTAssertThrowsError(try responder(on: code).respond(to: captured), "\(code)") {
                XCTAssertEqual($0 as? HandshakeError, .decryptionFailed, "\(code)")
            }
        }
        // The code itself, without the label, is not the prologue either.
        let bare = try Handshake.Responder(me: you.identity, peer: me.pinned, reconnectCounter: 4, prologue: codes[0].bytes)
        XCTAssertThrowsError(try bare.respond(to: captured))
    }

    // MARK: crafting

    /// A first message built step by step like `Initiator`, with any static key, payload and
    /// signer. `sealedAccountKey`: the account key sealed as the initiator's (default: its own).
    private func craftFirstMessage(staticAccount: SigningKey, responderAccountKey: [UInt8], payload: HandshakePayload,
                                   signer: SigningKey, sealedAccountKey: [UInt8]? = nil) -> [UInt8] {
        var t = HandshakeTranscript(prologue: [], responderAccountKey: responderAccountKey)
        let e = AgreementKey.generate()
        let header: [UInt8] = [Handshake.protocolVersion, 1]
        let responderStatic = Signature.agreementPublicKey(fromSigningKey: responderAccountKey)!
        t.mix(header)
        t.mix(e.publicKey)
        t.mix(secret: try! e.sharedSecret(with: responderStatic))
        let sealedStatic = t.seal(sealedAccountKey ?? staticAccount.publicKey, messageNumber: 1)
        t.mix(secret: try! staticAccount.agreementKey().sharedSecret(with: responderStatic))
        let body = payload.body()
        let signature = signer.sign(HandshakePayload.signedMessage(role: .initiator, transcript: t.hash, body: body))
        return header + e.publicKey + sealedStatic + t.seal(body + signature, messageNumber: 1)
    }

    /// A reply built like `Responder` (which must hold the real static key to read the first
    /// message), with any payload and signer.
    private func craftReply(to first: [UInt8], staticAccount: SigningKey, initiatorAccountKey: [UInt8],
                            payload: HandshakePayload, signer: SigningKey) -> [UInt8] {
        let parts = try! Handshake.parse(first, messageNumber: 1)
        let initiatorStatic = Signature.agreementPublicKey(fromSigningKey: initiatorAccountKey)!
        let mine = staticAccount.agreementKey()
        var t = HandshakeTranscript(prologue: [], responderAccountKey: staticAccount.publicKey)
        t.mix(parts.header)
        t.mix(parts.ephemeral)
        t.mix(secret: try! mine.sharedSecret(with: parts.ephemeral))
        _ = try! t.open(parts.sealedStatic, messageNumber: 1)
        t.mix(secret: try! mine.sharedSecret(with: initiatorStatic))
        _ = try! t.open(parts.sealed, messageNumber: 1)
        let e = AgreementKey.generate()
        let header: [UInt8] = [Handshake.protocolVersion, 2]
        t.mix(header)
        t.mix(e.publicKey)
        t.mix(secret: try! e.sharedSecret(with: parts.ephemeral))
        t.mix(secret: try! e.sharedSecret(with: initiatorStatic))
        let body = payload.body()
        let signature = signer.sign(HandshakePayload.signedMessage(role: .responder, transcript: t.hash, body: body))
        return header + e.publicKey + t.seal(body + signature, messageNumber: 2)
    }
}
