import XCTest
import RChatCore
@testable import RChatCrypto

final class ConversationSecretTests: XCTestCase {
    func testBothSidesDeriveTheSameSecret() throws {
        var seen = Set<[UInt8]>()
        for n in [UInt8(1), 10, 20, 30, 40] {
            let pair = ConvPair.make(n)
            let mine = pair.initiator.conversation(with: pair.responder)
            let theirs = pair.responder.conversation(with: pair.initiator)
            XCTAssertEqual(mine.key.count, 32)
            XCTAssertEqual(mine.key.testBytes, theirs.key.testBytes, "pair \(n)")
            XCTAssertEqual(mine.tag, theirs.tag)
            XCTAssertTrue(seen.insert(mine.key.testBytes).inserted, "pairs must not share a secret")
        }
    }

    /// The derivation, spelled out from the primitives: X25519 of the agreement forms, then
    /// deriveKey with both public keys, lower first.
    func testDerivationIsStaticStaticDHBoundToBothKeys() throws {
        let pair = ConvPair.make(3)
        let me = pair.responder.account, peer = pair.initiator.account
        let dh = try me.agreementKey().sharedSecret(with: Signature.agreementPublicKey(fromSigningKey: peer.publicKey)!)
        let expected = Hash.deriveKey(from: dh, context: "rchat conversation secret v1", peer.publicKey, me.publicKey)
        XCTAssertEqual(try ConversationSecret(myAccount: me, peerAccountKey: peer.publicKey).key.testBytes, expected.testBytes)
    }

    func testSurvivesReinstallThatRestoresTheAccount() {
        let sam = ConvParty(accountSeed: 5, deviceSeed: 105), alex = ConvParty(accountSeed: 6, deviceSeed: 106)
        let before = sam.conversation(with: alex)
        // Same account seed, new device key: a reinstall or a new machine with the export.
        let samRestored = ConvParty(accountSeed: 5, deviceSeed: 250)
        XCTAssertEqual(samRestored.conversation(with: alex).key.testBytes, before.key.testBytes)
        XCTAssertEqual(alex.conversation(with: samRestored).key.testBytes, before.key.testBytes)
        // A different account with the same contact is a different conversation.
        let stranger = ConvParty(accountSeed: 99, deviceSeed: 98)
        XCTAssertNotEqual(stranger.conversation(with: alex).key.testBytes, before.key.testBytes)
    }

    func testRelayOwnerIsTheKeyThatSortsFirst() {
        let low = [UInt8](repeating: 0x01, count: 32), high = [UInt8](repeating: 0xfe, count: 32)
        var mid = low; mid[31] = 0x02
        let cases: [(a: [UInt8], b: [UInt8], owner: [UInt8])] = [
            (low, high, low), (high, low, low), (low, mid, low), (mid, low, low), (mid, high, mid), (high, mid, mid),
        ]
        for c in cases {
            XCTAssertEqual(ConversationSecret.relayOwner(c.a, c.b), c.owner)
            XCTAssertEqual(ConversationSecret.relayOwner(c.a, c.b), ConversationSecret.relayOwner(c.b, c.a), "both sides agree")
        }
        for n in [UInt8(1), 11, 21] {
            let pair = ConvPair.make(n)
            let i = pair.initiator.conversation(with: pair.responder), r = pair.responder.conversation(with: pair.initiator)
            XCTAssertEqual(i.relayOwner, r.relayOwner)
            XCTAssertEqual(i.relayOwner, pair.initiator.account.publicKey)
            XCTAssertTrue(i.hostedOnMyRelay)
            XCTAssertFalse(r.hostedOnMyRelay)
        }
    }

    func testRefusesOwnKeyAndInvalidKeys() {
        let me = ConvParty.key(1)
        let bad: [(String, [UInt8])] = [
            ("own key", me.publicKey),
            ("short", [UInt8](repeating: 7, count: 31)),
            ("empty", []),
        ]
        for (name, key) in bad {
            XCTAssertThrowsError(try ConversationSecret(myAccount: me, peerAccountKey: key), name)
        }
    }

    func testTagIsOneWayAndPerConversation() {
        let p1 = ConvPair.make(1), p2 = ConvPair.make(50)
        let c1 = p1.initiator.conversation(with: p1.responder), c2 = p2.initiator.conversation(with: p2.responder)
        XCTAssertEqual(c1.tag.count, ConversationSecret.tagBytes)
        XCTAssertNotEqual(c1.tag, c2.tag)
        XCTAssertNotEqual(c1.tag, Array(c1.key.testBytes.prefix(16)))
    }
}
