import XCTest
import RChatCore
@testable import RChatCrypto

final class EnvelopeTests: XCTestCase {
    let pair = ConvPair.make(1)
    lazy var alice = pair.initiator.conversation(with: pair.responder)   // initiator's view
    lazy var bob = pair.responder.conversation(with: pair.initiator)     // responder's view

    private func id(_ n: UInt8) -> MessageID { MessageID(bytes: [UInt8](repeating: n, count: 16))! }

    func testRoundTripBothDirections() throws {
        let (a, b) = try pair.handshake()
        var alices = a.started, bobs = b.started
        var aliceKeys: Set<[UInt8]> = []
        let cases: [(kind: EnvelopeKind, body: [UInt8])] = [
            (.message, MessageContent.text("hello").encoded()),
            (.message, []),
            (.receiptDelivered, id(9).bytes + id(10).bytes),
            (.receiptRead, id(9).bytes),
            (.notice, [UInt8](repeating: 7, count: 3000)),
            (.cover, [0, 0, 0]),
        ]
        for (n, c) in cases.enumerated() {
            let messageID = id(UInt8(n))
            // Alice → Bob.
            let toBob = try XCTUnwrap(alices.seal(kind: c.kind, messageID: messageID, body: c.body, conversation: alice))
            let h1 = try Envelope.openHeader(toBob, conversation: bob)
            XCTAssertEqual(h1.kind, c.kind)
            XCTAssertEqual(h1.messageID, messageID)
            XCTAssertEqual(h1.sequence, UInt64(n))
            XCTAssertEqual(h1.sessionID, a.id)
            // What someone wrote takes the DH step owed at a change of direction (a new
            // ratchet key, its chain from 0); what rChat sends by itself rides the chain.
            if c.kind.takesRatchetStep {
                XCTAssertEqual(h1.ratchet?.number, 0, "\(c.kind)")
                XCTAssertTrue(aliceKeys.insert(h1.ratchet!.publicKey).inserted, "a fresh ratchet key after Bob's reply")
            } else {
                XCTAssertTrue(aliceKeys.contains(h1.ratchet!.publicKey), "\(c.kind) in the chain as it was")
            }
            XCTAssertEqual(try bobs.open(toBob, header: h1, at: 0), c.body)
            // Bob → Alice.
            let toAlice = try XCTUnwrap(bobs.seal(kind: c.kind, messageID: messageID, body: c.body, conversation: bob))
            let h2 = try Envelope.openHeader(toAlice, conversation: alice)
            XCTAssertEqual(try alices.open(toAlice, header: h2, at: 0), c.body)
            // Padded inside: with its link frame's type byte and trailer, the smallest payload size
            // that holds the body and the padding's own trailer.
            let needed = Envelope.framingBytes + Envelope.minimumBytes + c.body.count + Padding.trailerBytes
            XCTAssertEqual(toBob.count + Envelope.framingBytes, Padding.payloadSizes.first { $0 >= needed })
            XCTAssertEqual(toAlice.count, toBob.count)
        }
    }

    /// A later version's kind: its header opens as `.newer` with the byte it came with (the
    /// body's seal binds to that byte, so it opens too, and under another byte it does not);
    /// 13 … 127 are items to keep, 128 … 255 may pass unseen, 0 is no version's.
    func testAKindALaterVersionWroteOpensAsNewerWithItsByte() throws {
        let (a, b) = try pair.handshake()
        var alices = a.started, bobs = b.started
        XCTAssertFalse(EnvelopeKind.known.contains(.newer))
        XCTAssertEqual(EnvelopeKind.known.map(\.rawValue), Array(1...13) + [128, 129, 130, 131], "this version's kinds")
        XCTAssertEqual(EnvelopeKind.known.filter { NewerItem.isEnvelopeKind($0.rawValue) }, [.groupMessage],
                       "a group message is the first item a version before groups keeps whole")
        for wireKind in [UInt8(14), 77, 127, 132, 200, 255] {
            let frame = try XCTUnwrap(alices.seal(wireKind: wireKind, messageID: id(wireKind), body: [1, 2, 3], conversation: alice))
            let opened = try Envelope.openHeader(frame, conversation: bob)
            XCTAssertEqual(opened.kind, .newer)
            XCTAssertEqual(opened.wireKind, wireKind)
            XCTAssertEqual(opened.isNewerItem, wireKind <= 127, "\(wireKind)")
            let moved = EnvelopeHeader(wireKind: wireKind == 255 ? 254 : wireKind + 1, messageID: id(wireKind), sequence: opened.sequence,
                                       sessionID: a.id, ratchet: opened.ratchet)
            XCTAssertThrowsError(try bobs.open(frame, header: moved, at: 0)) {
                XCTAssertEqual($0 as? EnvelopeError, .bodyUnreadable)
            }
            XCTAssertEqual(try bobs.open(frame, header: opened, at: 0), [1, 2, 3], "the failed try under another byte moved nothing")
        }
        for kind in EnvelopeKind.known {
            let frame = try XCTUnwrap(alices.seal(kind: kind, messageID: id(1), body: [], conversation: alice))
            let opened = try Envelope.openHeader(frame, conversation: bob)
            XCTAssertEqual(opened.kind, kind)
            XCTAssertEqual(opened.wireKind, kind.rawValue)
            XCTAssertFalse(opened.isNewerItem)
        }
        let zero = try XCTUnwrap(alices.seal(wireKind: 0, messageID: id(1), body: [], conversation: alice))
        XCTAssertThrowsError(try Envelope.openHeader(zero, conversation: bob)) { XCTAssertEqual($0 as? EnvelopeError, .malformed) }
    }

    func testAMessageAReceiptAndADummyOfOneSizeClassAreTheSameLength() throws {
        var alices = try pair.handshake().0.started
        let message = try XCTUnwrap(alices.seal(kind: .message, messageID: id(1), body: MessageContent.text("see you at eight").encoded(),
                                                conversation: alice))
        var receipt = ByteWriter(capacity: 18)
        receipt.u16(1); receipt.raw(id(1))
        let delivered = try XCTUnwrap(alices.seal(kind: .receiptDelivered, messageID: id(2), body: receipt.bytes, conversation: alice))
        let dummy = try XCTUnwrap(alices.seal(kind: .cover, messageID: id(3), body: [], conversation: alice))
        XCTAssertEqual(message.count, dummy.count)
        XCTAssertEqual(delivered.count, dummy.count)
        XCTAssertEqual(dummy.count + Envelope.framingBytes, Padding.payloadSizes[0])
    }

    func testTheLargestChunkFitsTheLargestSize() throws {
        var alices = try pair.handshake().0.started
        // A chunk's body: u32 index, the stream header (first chunk), a whole sealed chunk.
        let body = [UInt8](repeating: 7, count: 4 + FileStream.headerBytes + FileStream.cipherChunkBytes)
        let chunk = try XCTUnwrap(alices.seal(kind: .chunk, messageID: id(5), body: body, conversation: alice))
        XCTAssertEqual(chunk.count + Envelope.framingBytes, Padding.payloadSizes.last)
    }

    func testABodyWhosePaddingDoesNotUnpadIsRefused() throws {
        // Sealed with the envelope's own key (so only the padding is wrong): an inner length that lies.
        let (a, b) = try pair.handshake()
        var ratchet = a.ratchet, bobs = b.started
        let (ratchetHeader, key) = ratchet.nextSendKey()
        let header = EnvelopeHeader(kind: .message, messageID: id(4), sequence: 9, sessionID: a.id, ratchet: ratchetHeader)
        let lying: [UInt8] = [1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 40]
        let headerBox = AEAD.sealWithRandomNonce(header.encoded(), additionalData: [Envelope.version], key: alice.sendHeaderKey)
        let bodyBox = AEAD.seal(lying, additionalData: header.bodyAssociatedData(),
                                nonce: AEAD.counterNonce(9, direction: a.keys.role.rawValue), key: key)
        let frame = [Envelope.version] + headerBox + bodyBox
        let opened = try Envelope.openHeader(frame, conversation: bob)
        XCTAssertThrowsError(try bobs.open(frame, header: opened, at: 0)) {
            XCTAssertEqual($0 as? EnvelopeError, .malformed)
        }
    }

    func testHeaderReadableWithOnlyTheConversationSecret() throws {
        var alices = try pair.handshake().0.started
        let frame = try XCTUnwrap(alices.seal(kind: .message, messageID: id(1), body: MessageContent.text("lost").encoded(), conversation: alice))
        // Bob reinstalled and restored his account: the secret again, no session keys.
        let restoredBob = ConvParty(accountSeed: pair.responder.accountSeed, deviceSeed: 250)
        let bobAgain = restoredBob.conversation(with: pair.initiator)
        let header = try Envelope.openHeader(frame, conversation: bobAgain)
        XCTAssertEqual(header.messageID, id(1))
        XCTAssertEqual(header.sequence, 0)
        // …but not the body: no key for that session, and a later session's key does not fit.
        var nothing = SavedSessionState()
        XCTAssertThrowsError(try nothing.open(frame, header: header, at: 0)) { XCTAssertEqual($0 as? EnvelopeError, .wrongSession) }
        var later = try pair.handshake(responderCounter: nil).1.started
        XCTAssertThrowsError(try later.open(frame, header: header, at: 0)) {
            XCTAssertEqual($0 as? EnvelopeError, .wrongSession)
        }
    }

    func testHeaderOpensOnlyForThePeerInThisConversation() throws {
        var alices = try pair.handshake().0.started
        let frame = try XCTUnwrap(alices.seal(kind: .message, messageID: id(1), body: [1], conversation: alice))
        let other = ConvPair.make(80)
        let cases: [(name: String, conversation: ConversationSecret)] = [
            ("reflected back to its sender", alice),
            ("another conversation", other.initiator.conversation(with: other.responder)),
            ("the sender with a third party", pair.initiator.conversation(with: other.responder)),
        ]
        for c in cases {
            XCTAssertThrowsError(try Envelope.openHeader(frame, conversation: c.conversation), c.name) {
                XCTAssertEqual($0 as? EnvelopeError, .headerUnreadable, c.name)
            }
        }
    }

    func testAnyBitFlipIsRejected() throws {
        let (a, b) = try pair.handshake()
        var alices = a.started
        let bobs = b.started
        let frame = try XCTUnwrap(alices.seal(kind: .message, messageID: id(3), body: MessageContent.text("flip me").encoded(), conversation: alice))
        for index in frame.indices {
            for bit in 0..<8 {
                var bad = frame
                bad[index] ^= UInt8(1) << UInt8(bit)
                var fresh = bobs
                let opened: [UInt8]? = try? {
                    let header = try Envelope.openHeader(bad, conversation: bob)
                    return try fresh.open(bad, header: header, at: 0)
                }()
                XCTAssertNil(opened, "byte \(index) bit \(bit)")
            }
        }
        let cut: [(String, [UInt8], EnvelopeError)] = [
            ("empty", [], .malformed),
            ("version only", [Envelope.version], .malformed),
            ("future version", [4] + frame.dropFirst(), .unsupportedVersion(4)),
            ("header cut", Array(frame.prefix(40)), .malformed),
        ]
        for (name, bytes, error) in cut {
            XCTAssertThrowsError(try Envelope.openHeader(bytes, conversation: bob), name) { XCTAssertEqual($0 as? EnvelopeError, error, name) }
        }
        let header = try Envelope.openHeader(frame, conversation: bob)
        var fresh = bobs
        XCTAssertThrowsError(try fresh.open(Array(frame.dropLast()), header: header, at: 0)) {
            XCTAssertEqual($0 as? EnvelopeError, .bodyUnreadable)
        }
        XCTAssertEqual(try fresh.open(frame, header: header, at: 0), MessageContent.text("flip me").encoded(),
                       "a frame that did not open moved nothing: the real one opens after it")
    }

    func testBodyOfOneSessionDoesNotOpenWithAnother() throws {
        let (a1, b1) = try pair.handshake()
        let (_, b2) = try pair.handshake()
        var alices = a1.started
        let frame = try XCTUnwrap(alices.seal(kind: .message, messageID: id(4), body: [4, 2], conversation: alice))
        let header = try Envelope.openHeader(frame, conversation: bob)
        var second = b2.started
        XCTAssertThrowsError(try second.open(frame, header: header, at: 0)) {
            XCTAssertEqual($0 as? EnvelopeError, .wrongSession)
        }
        // Even when labelled as session 2, session 2's ratchet does not open it.
        let mislabelled = EnvelopeHeader(kind: .message, messageID: id(4), sequence: 0, sessionID: b2.id, ratchet: header.ratchet)
        XCTAssertThrowsError(try second.open(frame, header: mislabelled, at: 0)) {
            XCTAssertEqual($0 as? EnvelopeError, .bodyUnreadable)
        }
        // A sender cannot read its own frame (its ratchet names another key).
        XCTAssertThrowsError(try alices.open(frame, header: header, at: 0))
        // The session it was sealed in, among several, opens it.
        var both = b1.started
        both.begin(b2, at: 1)
        XCTAssertEqual(try both.open(frame, header: header, at: 2), [4, 2])
    }

    /// Bodies glued under another frame's header (another id, position or kind) fail.
    func testBodyCannotMoveToAnotherHeader() throws {
        let (a, b) = try pair.handshake()
        var alices = a.started
        let bobs = b.started
        func frame(_ n: UInt8, _ kind: EnvelopeKind) -> [UInt8] {
            alices.seal(kind: kind, messageID: id(n), body: [n, n], conversation: alice)!
        }
        let original = frame(1, .message)
        let headerLength = 1 + Envelope.headerBoxBytes
        let cases: [(String, [UInt8])] = [
            ("other position", frame(1, .message)),
            ("other message id", frame(2, .message)),
            ("other kind", frame(1, .receiptRead)),
        ]
        for (name, donor) in cases {
            let spliced = Array(donor.prefix(headerLength)) + original.dropFirst(headerLength)
            let header = try Envelope.openHeader(spliced, conversation: bob)
            var fresh = bobs
            XCTAssertThrowsError(try fresh.open(spliced, header: header, at: 0), name) {
                XCTAssertEqual($0 as? EnvelopeError, .bodyUnreadable, name)
            }
        }
        // The same header sealed twice looks different (random nonce): the relay cannot
        // match repeats.
        var again = a.started
        let first = again.seal(kind: .message, messageID: id(1), body: [1, 1], conversation: alice)!
        XCTAssertNotEqual(Array(first.prefix(headerLength)), Array(original.prefix(headerLength)))
    }
}

extension Session {
    /// This side's saved state with the session current, as an engine begins it.
    var started: SavedSessionState {
        var state = SavedSessionState()
        state.begin(self, at: 0)
        return state
    }
}
