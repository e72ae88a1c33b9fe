import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatRelayClient
@testable import RChatEngine

/// Keys don't match, reached as it happens: someone on the conversation's link (the relay,
/// or whoever holds the rendezvous code it links on) opens a handshake with Alice under an
/// account key of their own. Alice's engine proves that key is not Sam's, answers nothing,
/// leaves the link, marks Sam Keys don't match with a row, and sends nothing to Sam until
/// his code is entered again; then the real Sam gets her messages.
final class KeysDontMatchTests: RelayEngineTestCase {
    func testAHandshakeUnderAnotherAccountKeyStopsSendingUntilTheCodeIsEnteredAgain() throws {
        let address = try startRelay()
        let (alice, sam) = try aliceAndInitiatingSam(relay: address)
        let aliceKey = try alice.identity().accountKey.publicKey
        let aliceEngine = try sessionThenSamAway(alice: alice, sam: sam, samLogged: false)

        // The codes Alice presents for this conversation, as the relay sees them (the test
        // derives them from Sam's keys; an attacker is handed them by the relay), and an
        // account of the attacker's own whose key sorts before Alice's, so it may initiate.
        let secret = try ConversationSecret(myAccount: try sam.identity().accountKey, peerAccountKey: aliceKey)
        let attacker = (0..<64).lazy.map { _ in Handshake.LocalIdentity(account: .generate(), device: .generate()) }
            .first { Handshake.Role.of(myAccountKey: $0.account.publicKey, peerAccountKey: aliceKey) == .initiator }!
        let client = try RelayClient.connect(to: address, mailboxKey: .generate(), timeout: 10)
        rawClients.append(client)
        try client.present(RendezvousCode.presented(for: secret, at: Int64(Date().timeIntervalSince1970), .startedOver).map(\.bytes))
        let (link, code) = try nextLink(client)
        let pinnedAlice = Handshake.PinnedKeys(accountKey: aliceKey, deviceKey: alice.device.publicKey)
        let first = try Handshake.Initiator(me: attacker, peer: pinnedAlice, reconnectCounter: nil,
                                            prologue: Handshake.linkPrologue(code: code)).firstMessage()
        _ = try client.send(on: link, LinkFrame.handshakeFirst(first).encoded)

        try untilDeadline("Sam is in Keys don't match on Alice's side", seconds: 20) {
            try alice.contact(named: "Sam").state == .keysDontMatch
        }
        XCTAssertEqual(try rows(alice, "Sam").map(\.text),
                       ["Sam's keys don't match the ones you verified. Nothing can be sent to Sam until you enter their code again."])
        XCTAssertNil(try rows(alice, "Sam").first?.action, "no action: only entering the code again helps")
        // Alice answered nothing and left the link: the relay tells the attacker she is gone.
        let gone = try nextEvent(client, "Alice leaves the link") { event in
            if case .delivery(let d) = event, d.link == link { XCTFail("Alice answered the attacker: \(d.payload.prefix(1))") }
            if case .peerGone(link) = event { return true } else { return false }
        }
        XCTAssertEqual(gone, .peerGone(link: link))
        XCTAssertTrue(logLines.all.contains("Alice: Sam presented an account key other than the pinned one: Keys don't match"),
                      logLines.all.joined(separator: "\n"))

        // Nothing is sent while the keys don't match.
        let refused = try alice.send(to: "Sam", content: .text("not to an impostor"))
        aliceEngine.engine.wake()
        try waitForStatus(alice, "Sam", [refused], .failedToSend)

        // Alice enters Sam's real code again: Sam is back to normal, and the real Sam gets
        // what she writes next.
        let again = try alice.addContact(try sam.identity().contactCode(device: sam.device), name: nil)
        XCTAssertEqual(again.change, .reverified)
        XCTAssertEqual(try alice.contact(named: "Sam").state, .ok)
        XCTAssertTrue(aliceEngine.stop())
        let aliceAgain = try startEngine(alice, logged: true)
        _ = try startEngine(sam, logged: true)
        let after = try alice.send(to: "Sam", content: .text("to the real Sam"))
        aliceAgain.engine.wake()
        try waitForStatus(alice, "Sam", [after], .delivered)
        XCTAssertEqual(try messages(sam, "Alice").last?.id, after)
        XCTAssertEqual(try rows(alice, "Sam").count, 1, "one row for one mismatch")
    }
}
