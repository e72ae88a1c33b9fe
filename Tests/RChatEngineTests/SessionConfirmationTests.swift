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
        let alice = try account("Alice", relay: address)
        let aliceKey = try alice.identity().accountKey.publicKey
        // Sam must be the initiator (roles follow the account keys): one try in two.
        var sam = try account("Sam0", relay: address)
        var tries = 0
        while Handshake.Role.of(myAccountKey: try sam.identity().accountKey.publicKey, peerAccountKey: aliceKey) != .initiator {
            tries += 1
            XCTAssertLessThan(tries, 64)
            sam = try account("Sam\(tries)", relay: address)
        }
        let samIdentity = try sam.identity()
        _ = try alice.addContact(samIdentity.contactCode(device: sam.device), name: "Sam")
        _ = try sam.addContact(try alice.identity().contactCode(device: alice.device), name: "Alice")

        // A session, then Sam goes away.
        let aliceEngine = try sessionThenSamAway(alice: alice, sam: sam, samLogged: true)

        // Sam comes back for a moment: his mailbox, his codes, his keys, his saved counter.
        // He sends the handshake's first message and dies before reading the answer.
        let samAsAlice = try XCTUnwrap(sam.store.contact(named: "Alice"))
        let counter = try XCTUnwrap(Engine(account: sam) { _ in }.loadState(samAsAlice)?.reconnectCounter)
        let secret = try ConversationSecret(myAccount: samIdentity.accountKey, peerAccountKey: aliceKey)
        let client = try RelayClient.connect(to: address, mailboxKey: samIdentity.mailboxKey, timeout: 10)
        rawClients.append(client)
        try client.present(RendezvousCode.presented(for: secret, at: Int64(Date().timeIntervalSince1970), reconnectCounter: counter).map(\.bytes))
        guard case let .linked(link, _) = try nextEvent(client, "a link with Alice", {
            if case .linked = $0 { return true } else { return false }
        }) else { return XCTFail() }
        let initiator = try Handshake.Initiator(
            me: Handshake.LocalIdentity(account: samIdentity.accountKey, device: sam.device),
            peer: Handshake.PinnedKeys(accountKey: aliceKey, deviceKey: alice.device.publicKey), reconnectCounter: counter)
        _ = try client.send(on: link, LinkFrame.handshakeFirst(initiator.firstMessage()).encoded, ahead: true)
        _ = try nextEvent(client, "Alice's answer", {
            if case let .delivery(d) = $0, d.link == link, d.payload.first == 2 { return true } else { return false }
        })
        client.close()
        try untilDeadline("Alice's engine answered Sam's handshake", seconds: 20) {
            logLines.all.filter { $0.hasPrefix("Alice: secure session with Sam started") }.count >= 2
        }

        // Alice writes while Sam is away: it waits at the relay, Sent.
        let meanwhile = try alice.send(to: "Sam", text: "are you there?")
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
