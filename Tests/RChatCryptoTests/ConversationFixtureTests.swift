import XCTest
import RChatCore
@testable import RChatCrypto

/// One side of a conversation in these tests: account and device keys from fixed seeds, so
/// a "reinstall that restores the account" is the same seed again.
struct ConvParty {
    let accountSeed: UInt8
    let account: SigningKey
    let device: SigningKey

    init(accountSeed: UInt8, deviceSeed: UInt8) {
        self.accountSeed = accountSeed
        account = ConvParty.key(accountSeed)
        device = ConvParty.key(deviceSeed)
    }

    static func key(_ seed: UInt8) -> SigningKey {
        var bytes = [UInt8](repeating: seed, count: SigningKey.seedBytes)
        bytes[0] = 0x5a
        return try! SigningKey(seed: SecretBytes(consuming: &bytes))
    }

    var identity: Handshake.LocalIdentity { Handshake.LocalIdentity(account: account, device: device) }
    var pinned: Handshake.PinnedKeys { Handshake.PinnedKeys(accountKey: account.publicKey, deviceKey: device.publicKey) }

    func conversation(with peer: ConvParty) -> ConversationSecret {
        try! ConversationSecret(myAccount: account, peerAccountKey: peer.account.publicKey)
    }
}

/// Two parties, ordered by key so `initiator` is the one whose account key sorts first.
struct ConvPair {
    let initiator: ConvParty
    let responder: ConvParty

    /// Parties from seeds `n` (accounts n, n+1; devices n+100, n+101).
    static func make(_ n: UInt8 = 1) -> ConvPair {
        let a = ConvParty(accountSeed: n, deviceSeed: n &+ 100)
        let b = ConvParty(accountSeed: n &+ 1, deviceSeed: n &+ 101)
        return bytesPrecede(a.account.publicKey, b.account.publicKey) ? ConvPair(initiator: a, responder: b) : ConvPair(initiator: b, responder: a)
    }

    /// A full handshake; returns (initiator's session, responder's session).
    func handshake(initiatorCounter: UInt64? = 0, responderCounter: UInt64? = 0,
                   initiatorExtension: [UInt8] = [], responderExtension: [UInt8] = [],
                   prologue: [UInt8] = []) throws -> (Session, Session) {
        let i = try Handshake.Initiator(me: initiator.identity, peer: responder.pinned, reconnectCounter: initiatorCounter,
                                        extensionBytes: initiatorExtension, prologue: prologue)
        let r = try Handshake.Responder(me: responder.identity, peer: initiator.pinned, reconnectCounter: responderCounter,
                                        extensionBytes: responderExtension, prologue: prologue)
        let (reply, rs) = try r.respond(to: i.firstMessage())
        return (try i.finish(reply), rs)
    }
}

extension SecretBytes {
    var testBytes: [UInt8] { exposedCopy() }
}

final class ConversationFixtureTests: XCTestCase {
    func testFixturePartiesAreDistinctAndOrdered() {
        for n in [UInt8(1), 7, 42, 200] {
            let pair = ConvPair.make(n)
            XCTAssertTrue(bytesPrecede(pair.initiator.account.publicKey, pair.responder.account.publicKey))
            XCTAssertNotEqual(pair.initiator.device.publicKey, pair.responder.device.publicKey)
            // Same seed, same key: what a restored account looks like.
            XCTAssertEqual(ConvParty.key(n).publicKey, ConvParty.key(n).publicKey)
        }
    }
}
