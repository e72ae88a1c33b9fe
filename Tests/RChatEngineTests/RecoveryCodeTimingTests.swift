import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatRelayClient
@testable import RChatEngine

/// An established side presents its counter codes alone at first, and today's recovery code
/// (the same all day, so a relay could link the reconnects that present it) only once the
/// counter codes found nobody for `Engine.recoveryCodeAfterSeconds`: then a contact that
/// started over still finds it.
final class RecoveryCodeTimingTests: RelayEngineTestCase {
    func testTheRecoveryCodeIsPresentedOnlyOnceTheCounterCodesFoundNobody() throws {
        let address = try startRelay()
        let (alice, sam) = try aliceAndInitiatingSam(relay: address)
        let aliceKey = try alice.identity().accountKey.publicKey
        let aliceEngine = try sessionThenSamAway(alice: alice, sam: sam, samLogged: false)
        // Sam is gone: Alice presents her codes again, the new counter's only.
        let samGone = Date()

        // Someone who started over (no counter) presents today's recovery codes at once.
        let secret = try ConversationSecret(myAccount: try sam.identity().accountKey, peerAccountKey: aliceKey)
        let client = try RelayClient.connect(to: address, mailboxKey: .generate(), timeout: 10)
        rawClients.append(client)
        try client.present(RendezvousCode.presented(for: secret, at: Int64(Date().timeIntervalSince1970), .startedOver).map(\.bytes))
        let (_, code) = try nextLink(client)
        let waited = Date().timeIntervalSince(samGone)

        let today = RendezvousCode.day(at: Int64(Date().timeIntervalSince1970))
        XCTAssertEqual(code, RendezvousCode.recovery(secret, day: today).bytes, "linked on today's recovery code")
        // Not before the counter codes had their time alone (with a second's slack for when
        // Alice learnt Sam had gone).
        XCTAssertGreaterThanOrEqual(waited, Engine.recoveryCodeAfterSeconds - 1,
                                    "Alice presented the recovery code while her counter code could still be enough")
        XCTAssertTrue(aliceEngine.stop())
    }
}
