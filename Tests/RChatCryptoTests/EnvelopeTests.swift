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
        let cases: [(kind: EnvelopeKind, sequence: UInt64, body: [UInt8])] = [
            (.message, 0, MessageContent.text("hello").encoded()),
            (.message, 1, []),
            (.receiptDelivered, 2, id(9).bytes + id(10).bytes),
            (.receiptRead, 3, id(9).bytes),
            (.notice, 4, [UInt8](repeating: 7, count: 3000)),
            (.cover, UInt64.max, [0, 0, 0]),
        ]
        for (n, c) in cases.enumerated() {
            let messageID = id(UInt8(n))
            // Alice → Bob.
            let toBob = Envelope.seal(kind: c.kind, messageID: messageID, sequence: c.sequence, body: c.body, keys: a.keys, conversation: alice)
            let h1 = try Envelope.openHeader(toBob, conversation: bob)
            XCTAssertEqual(h1, EnvelopeHeader(kind: c.kind, messageID: messageID, sequence: c.sequence, sessionID: a.id))
            XCTAssertEqual(try Envelope.openBody(toBob, header: h1, key: b.keys.receiving), c.body)
            // Bob → Alice.
            let toAlice = Envelope.seal(kind: c.kind, messageID: messageID, sequence: c.sequence, body: c.body, keys: b.keys, conversation: bob)
            let h2 = try Envelope.openHeader(toAlice, conversation: alice)
            XCTAssertEqual(try Envelope.openBody(toAlice, header: h2, key: a.keys.receiving), c.body)
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
        XCTAssertFalse(EnvelopeKind.known.contains(.newer))
        XCTAssertEqual(EnvelopeKind.known.map(\.rawValue), Array(1...13) + [128, 129, 130, 131], "this version's kinds")
        XCTAssertEqual(EnvelopeKind.known.filter { NewerItem.isEnvelopeKind($0.rawValue) }, [.groupMessage],
                       "a group message is the first item a version before groups keeps whole")
        for wireKind in [UInt8(14), 77, 127, 132, 200, 255] {
            let header = EnvelopeHeader(wireKind: wireKind, messageID: id(wireKind), sequence: 3, sessionID: a.id)
            let frame = Envelope.seal(header, body: [1, 2, 3], keys: a.keys, conversation: alice)
            let opened = try Envelope.openHeader(frame, conversation: bob)
            XCTAssertEqual(opened.kind, .newer)
            XCTAssertEqual(opened.wireKind, wireKind)
            XCTAssertEqual(opened.isNewerItem, wireKind <= 127, "\(wireKind)")
            XCTAssertEqual(try Envelope.openBody(frame, header: opened, key: b.keys.receiving), [1, 2, 3])
            let moved = EnvelopeHeader(wireKind: wireKind == 255 ? 254 : wireKind + 1, messageID: id(wireKind), sequence: 3, sessionID: a.id)
            XCTAssertThrowsError(try Envelope.openBody(frame, header: moved, key: b.keys.receiving)) {
                XCTAssertEqual($0 as? EnvelopeError, .bodyUnreadable)
            }
        }
        for kind in EnvelopeKind.known {
            let frame = Envelope.seal(kind: kind, messageID: id(1), sequence: 1, body: [], keys: a.keys, conversation: alice)
            let opened = try Envelope.openHeader(frame, conversation: bob)
            XCTAssertEqual(opened.kind, kind)
            XCTAssertEqual(opened.wireKind, kind.rawValue)
            XCTAssertFalse(opened.isNewerItem)
        }
        let zero = Envelope.seal(EnvelopeHeader(wireKind: 0, messageID: id(1), sequence: 1, sessionID: a.id), body: [],
                                 keys: a.keys, conversation: alice)
        XCTAssertThrowsError(try Envelope.openHeader(zero, conversation: bob)) { XCTAssertEqual($0 as? EnvelopeError, .malformed) }
    }

    func testAMessageAReceiptAndADummyOfOneSizeClassAreTheSameLength() throws {
        let (a, _) = try pair.handshake()
        let message = Envelope.seal(kind: .message, messageID: id(1), sequence: 1, body: MessageContent.text("see you at eight").encoded(),
                                    keys: a.keys, conversation: alice)
        var receipt = ByteWriter(capacity: 18)
        receipt.u16(1); receipt.raw(id(1))
        let delivered = Envelope.seal(kind: .receiptDelivered, messageID: id(2), sequence: 2, body: receipt.bytes, keys: a.keys, conversation: alice)
        let dummy = Envelope.seal(kind: .cover, messageID: id(3), sequence: 3, body: [], keys: a.keys, conversation: alice)
        XCTAssertEqual(message.count, dummy.count)
        XCTAssertEqual(delivered.count, dummy.count)
        XCTAssertEqual(dummy.count + Envelope.framingBytes, Padding.payloadSizes[0])
    }

    func testTheLargestChunkFitsTheLargestSize() throws {
        let (a, _) = try pair.handshake()
        // A chunk's body: u32 index, the stream header (first chunk), a whole sealed chunk.
        let body = [UInt8](repeating: 7, count: 4 + FileStream.headerBytes + FileStream.cipherChunkBytes)
        let chunk = Envelope.seal(kind: .chunk, messageID: id(5), sequence: 1, body: body, keys: a.keys, conversation: alice)
        XCTAssertEqual(chunk.count + Envelope.framingBytes, Padding.payloadSizes.last)
    }

    func testABodyWhosePaddingDoesNotUnpadIsRefused() throws {
        // Sealed with the session's key (so only the padding is wrong): an inner length that lies.
        let (a, b) = try pair.handshake()
        let header = EnvelopeHeader(kind: .message, messageID: id(4), sequence: 9, sessionID: a.id)
        let lying: [UInt8] = [1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 40]
        let headerBox = AEAD.sealWithRandomNonce(header.encoded(), additionalData: [Envelope.version], key: alice.sendHeaderKey)
        let bodyBox = AEAD.seal(lying, additionalData: header.bodyAssociatedData(frameVersion: Envelope.version),
                                nonce: AEAD.counterNonce(9, direction: a.keys.role.rawValue), key: a.keys.sendKey)
        let frame = [Envelope.version] + headerBox + bodyBox
        let opened = try Envelope.openHeader(frame, conversation: bob)
        XCTAssertThrowsError(try Envelope.openBody(frame, header: opened, key: b.keys.receiving)) {
            XCTAssertEqual($0 as? EnvelopeError, .malformed)
        }
    }

    func testHeaderReadableWithOnlyTheConversationSecret() throws {
        let (a, _) = try pair.handshake()
        let frame = Envelope.seal(kind: .message, messageID: id(1), sequence: 5, body: MessageContent.text("lost").encoded(), keys: a.keys, conversation: alice)
        // Bob reinstalled and restored his account: the secret again, no session keys.
        let restoredBob = ConvParty(accountSeed: pair.responder.accountSeed, deviceSeed: 250)
        let bobAgain = restoredBob.conversation(with: pair.initiator)
        let header = try Envelope.openHeader(frame, conversation: bobAgain)
        XCTAssertEqual(header.messageID, id(1))
        XCTAssertEqual(header.sequence, 5)
        // …but not the body: no key for that session, and a later session's key does not fit.
        XCTAssertThrowsError(try Envelope.openBody(frame, header: header, keys: [])) { XCTAssertEqual($0 as? EnvelopeError, .wrongSession) }
        let (_, later) = try pair.handshake(responderCounter: nil)
        XCTAssertThrowsError(try Envelope.openBody(frame, header: header, keys: [later.keys.receiving])) {
            XCTAssertEqual($0 as? EnvelopeError, .wrongSession)
        }
    }

    func testHeaderOpensOnlyForThePeerInThisConversation() throws {
        let (a, _) = try pair.handshake()
        let frame = Envelope.seal(kind: .message, messageID: id(1), sequence: 0, body: [1], keys: a.keys, conversation: alice)
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
        let frame = Envelope.seal(kind: .message, messageID: id(3), sequence: 7, body: MessageContent.text("flip me").encoded(), keys: a.keys, conversation: alice)
        for index in frame.indices {
            for bit in 0..<8 {
                var bad = frame
                bad[index] ^= UInt8(1) << UInt8(bit)
                let opened: [UInt8]? = try? {
                    let header = try Envelope.openHeader(bad, conversation: bob)
                    return try Envelope.openBody(bad, header: header, key: b.keys.receiving)
                }()
                XCTAssertNil(opened, "byte \(index) bit \(bit)")
            }
        }
        let cut: [(String, [UInt8], EnvelopeError)] = [
            ("empty", [], .malformed),
            ("version only", [Envelope.version], .malformed),
            ("future version", [3] + frame.dropFirst(), .unsupportedVersion(3)),
            ("header cut", Array(frame.prefix(40)), .malformed),
        ]
        for (name, bytes, error) in cut {
            XCTAssertThrowsError(try Envelope.openHeader(bytes, conversation: bob), name) { XCTAssertEqual($0 as? EnvelopeError, error, name) }
        }
        let header = try Envelope.openHeader(frame, conversation: bob)
        XCTAssertThrowsError(try Envelope.openBody(Array(frame.dropLast()), header: header, key: b.keys.receiving)) {
            XCTAssertEqual($0 as? EnvelopeError, .bodyUnreadable)
        }
    }

    func testBodyOfOneSessionDoesNotOpenWithAnother() throws {
        let (a1, b1) = try pair.handshake()
        let (_, b2) = try pair.handshake()
        let frame = Envelope.seal(kind: .message, messageID: id(4), sequence: 0, body: [4, 2], keys: a1.keys, conversation: alice)
        let header = try Envelope.openHeader(frame, conversation: bob)
        XCTAssertThrowsError(try Envelope.openBody(frame, header: header, key: b2.keys.receiving)) {
            XCTAssertEqual($0 as? EnvelopeError, .wrongSession)
        }
        // Even when labelled as session 1, session 2's key does not open it.
        let mislabelled = ReceiveKey(sessionID: a1.id, senderRole: .initiator, key: b2.keys.receiveKey)
        XCTAssertThrowsError(try Envelope.openBody(frame, header: header, key: mislabelled)) {
            XCTAssertEqual($0 as? EnvelopeError, .bodyUnreadable)
        }
        // A sender cannot read its own frame with its receive key (per-direction keys).
        let own = ReceiveKey(sessionID: a1.id, senderRole: .initiator, key: a1.keys.receiveKey)
        XCTAssertThrowsError(try Envelope.openBody(frame, header: header, key: own))
        // Among several keys, the right one is picked.
        XCTAssertEqual(try Envelope.openBody(frame, header: header, keys: [b2.keys.receiving, b1.keys.receiving]), [4, 2])
    }

    /// Bodies glued under another frame's header (another id, position or kind) fail.
    func testBodyCannotMoveToAnotherHeader() throws {
        let (a, b) = try pair.handshake()
        func frame(_ n: UInt8, _ seq: UInt64, _ kind: EnvelopeKind) -> [UInt8] {
            Envelope.seal(kind: kind, messageID: id(n), sequence: seq, body: [n, n], keys: a.keys, conversation: alice)
        }
        let original = frame(1, 1, .message)
        let headerLength = 1 + Envelope.headerBoxBytes
        let cases: [(String, [UInt8])] = [
            ("other position", frame(1, 2, .message)),
            ("other message id", frame(2, 1, .message)),
            ("other kind", frame(1, 1, .receiptRead)),
        ]
        for (name, donor) in cases {
            let spliced = Array(donor.prefix(headerLength)) + original.dropFirst(headerLength)
            let header = try Envelope.openHeader(spliced, conversation: bob)
            XCTAssertThrowsError(try Envelope.openBody(spliced, header: header, key: b.keys.receiving), name) {
                XCTAssertEqual($0 as? EnvelopeError, .bodyUnreadable, name)
            }
        }
        // The same header sealed twice looks different (random nonce): the relay cannot
        // match repeats.
        XCTAssertNotEqual(Array(frame(1, 1, .message).prefix(headerLength)), Array(original.prefix(headerLength)))
    }
}
