import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatRelayClient
@testable import RChatEngine

/// A responder begins its new session when it answers the handshake, but the initiator may
/// die before it completes (Sam's linger stopped a moment after it presented its codes).
/// What the responder sends before the initiator's first frame in the new session goes in
/// the session both sides surely hold: Sam reads it when he is back, and nothing needs
/// recovering ("couldn't read", an automatic resend).
final class SessionConfirmationTests: RelayEngineTestCase {
    func testWhatTheResponderSendsBeforeConfirmationStaysReadableWhenTheInitiatorDies() throws {
        let address = try startRelay()
        // Sam initiates (roles follow the account keys): the handshake's first message is his.
        let (alice, sam) = try aliceAndInitiatingSam(relay: address)
        let aliceKey = try alice.identity().accountKey.publicKey
        let samIdentity = try sam.identity()

        // A session, then Sam goes away.
        let aliceEngine = try sessionThenSamAway(alice: alice, sam: sam, samLogged: true)

        // Sam comes back for a moment: his mailbox, his codes, his keys, his saved counter.
        // He sends the handshake's first message and dies before reading the answer.
        let samAsAlice = try XCTUnwrap(sam.store.contact(named: "Alice"))
        let counter = try XCTUnwrap(Engine(account: sam) { _ in }.loadState(samAsAlice)?.reconnectCounter)
        let secret = try ConversationSecret(myAccount: samIdentity.accountKey, peerAccountKey: aliceKey)
        let client = try RelayClient.connect(to: address, mailboxKey: samIdentity.mailboxKey, timeout: 10)
        rawClients.append(client)
        try client.present(RendezvousCode.presented(for: secret, at: Int64(Date().timeIntervalSince1970), .first(reconnectCounter: counter)).map(\.bytes))
        let (link, code) = try nextLink(client)
        let initiator = try Handshake.Initiator(
            me: Handshake.LocalIdentity(account: samIdentity.accountKey, device: sam.device),
            peer: Handshake.PinnedKeys(accountKey: aliceKey, deviceKey: alice.device.publicKey), reconnectCounter: counter,
            prologue: Handshake.linkPrologue(code: code))
        _ = try client.send(on: link, LinkFrame.handshakeFirst(initiator.firstMessage()).encoded, ahead: true)
        _ = try linkPayload(client, link, 2)
        client.close()
        try untilDeadline("Alice's engine answered Sam's handshake", seconds: 20) {
            logLines.all.filter { $0.hasPrefix("Alice: secure session with Sam started") }.count >= 2
        }

        // Alice writes while Sam is away: it waits at the relay, Sent.
        let meanwhile = try alice.send(to: "Sam", content: .text("are you there?"))
        aliceEngine.engine.wake()
        try waitForStatus(alice, "Sam", [meanwhile], .sent)

        // Sam is back for real: he reads it, and nothing had to be recovered.
        _ = try startEngine(sam, logged: true)
        try waitForStatus(alice, "Sam", [meanwhile], .delivered)
        XCTAssertEqual(try messages(sam, "Alice").map(\.text), ["warm-up", "are you there?"])
        XCTAssertEqual(try rows(alice, "Sam").map(\.text), [], "no recovery row")
        XCTAssertFalse(logLines.all.contains { $0.contains("cannot be decrypted") || $0.contains("could not read") },
                       logLines.all.joined(separator: "\n"))
        XCTAssertEqual(try messages(alice, "Sam").first { $0.id == meanwhile }?.resent, false)
    }
}
