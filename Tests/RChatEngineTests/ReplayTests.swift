import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatRelayClient
@testable import RChatEngine

/// What a relay that keeps old frames can replay, and that it gets nothing for it. Alice's
/// engine against Sam played by a relay client holding Sam's real account and device keys
/// (a same-machine reinstall): a session on one link with a could-not-read notice (Alice
/// resends by herself), then the same notice again in that session, the handshake's first
/// message again on that link and on the next one, and the first session's notice in the
/// second session.
/// Each replay is a log line and nothing else: no session, no resend, no Not delivered, no row.
final class ReplayTests: RelayEngineTestCase {
    func testReplayedHandshakeMessagesAndNoticesDoNothing() throws {
        let address = try startRelay()
        // Sam initiates (roles follow the account keys): the handshake's first message is his.
        let (alice, sam) = try aliceAndInitiatingSam(relay: address)
        let aliceKey = try alice.identity().accountKey.publicKey
        let samIdentity = try sam.identity()
        let aliceEngine = try sessionThenSamAway(alice: alice, sam: sam, samLogged: false)
        let held = [try alice.send(to: "Sam", content: .text("held 1")), try alice.send(to: "Sam", content: .text("held 2"))]
        aliceEngine.engine.wake()
        try waitForStatus(alice, "Sam", held, .sent)

        let secret = try ConversationSecret(myAccount: samIdentity.accountKey, peerAccountKey: aliceKey)
        let me = Handshake.LocalIdentity(account: samIdentity.accountKey, device: sam.device)
        let pinnedAlice = Handshake.PinnedKeys(accountKey: aliceKey, deviceKey: alice.device.publicKey)
        func now() -> Int64 { Int64(Date().timeIntervalSince1970) }
        let sessionsStarted = "Alice: secure session with Sam started"
        func sessions() -> Int { logLines.all.filter { $0.hasPrefix(sessionsStarted) }.count }
        func logged(_ text: String) -> Int { logLines.all.filter { $0.contains(text) }.count }

        // First link: Sam has no saved state, a handshake, then his notice: Alice resends both.
        let first = try RelayClient.connect(to: address, mailboxKey: SigningKey.generate(), timeout: 10)
        rawClients.append(first)
        try first.present(RendezvousCode.presented(for: secret, at: now(), .startedOver).map(\.bytes))
        let (link1, code1) = try nextLink(first)
        let initiator1 = try Handshake.Initiator(me: me, peer: pinnedAlice, reconnectCounter: nil, prologue: Handshake.linkPrologue(code: code1))
        let capturedFirst = LinkFrame.handshakeFirst(initiator1.firstMessage()).encoded
        _ = try first.send(on: link1, capturedFirst, ahead: true)
        let session1 = try initiator1.finish(try linkPayload(first, link1, 2))
        try untilDeadline("Alice's engine starts the session", seconds: 20) { sessions() == 2 }

        let notice = CouldNotReadNotice(messageIDs: held, conversation: secret, session: session1.id, time: now()).signed(by: sam.device)
        let capturedNotice = LinkFrame.envelope(PeerSession(session1).seal(.notice, notice, conversation: secret)).encoded
        _ = try first.send(on: link1, capturedNotice)
        let resentRow = "Sam's phone couldn't read 2 messages, so rChat sent them again."
        try untilDeadline("Alice resends both by herself", seconds: 20) { try self.rows(alice, "Sam").map(\.text) == [resentRow] }
        try waitForStatus(alice, "Sam", held, .sent)
        XCTAssertEqual(try messages(alice, "Sam").filter { held.contains($0.id) }.map(\.resent), [true, true])
        let afterResend = try alice.conversation("Sam")

        // 1. The same notice again, in the same session: its key opened it already (the
        // ratchet), so it does not open again.
        _ = try first.send(on: link1, capturedNotice)
        let handedAgain = "a frame from Sam handed again (its key opened one already): dropped"
        try untilDeadline("Alice ignores the notice read already", seconds: 20) { logged(handedAgain) == 1 }
        XCTAssertEqual(try alice.conversation("Sam"), afterResend, "no status changed, no row added")

        // 2. The handshake's first message again, on its own link.
        _ = try first.send(on: link1, capturedFirst, ahead: true)
        try untilDeadline("Alice ignores a second handshake on the link", seconds: 20) {
            logged("rejected a second handshake from Sam on one link") == 1
        }
        XCTAssertEqual(sessions(), 2, "no session from a replayed handshake message")

        // Second link: Sam comes back with the counter both sides saved (no recovery code, so
        // the link is made on another rendezvous code than the first).
        first.close()
        let second = try RelayClient.connect(to: address, mailboxKey: SigningKey.generate(), timeout: 10)
        rawClients.append(second)
        try second.present(RendezvousCode.presented(for: secret, at: now(), .counter(session1.nextReconnectCounter)).map(\.bytes))
        let (link2, code2) = try nextLink(second)
        XCTAssertNotEqual(code2, code1)

        // 3. The first link's handshake message on this link: it does not open here.
        _ = try second.send(on: link2, capturedFirst, ahead: true)
        try untilDeadline("Alice rejects the replayed handshake message", seconds: 20) {
            logged("rejected a handshake from Sam that failed") == 1
        }
        XCTAssertEqual(sessions(), 2, "no session from a replayed handshake message")

        // The genuine one does.
        let initiator2 = try Handshake.Initiator(me: me, peer: pinnedAlice, reconnectCounter: session1.nextReconnectCounter,
                                                 prologue: Handshake.linkPrologue(code: code2))
        _ = try second.send(on: link2, LinkFrame.handshakeFirst(initiator2.firstMessage()).encoded, ahead: true)
        _ = try initiator2.finish(try linkPayload(second, link2, 2))
        try untilDeadline("Alice's engine starts the second session", seconds: 20) { sessions() == 3 }

        // 4. The first session's notice, in the second session (Alice still holds the first
        // session's ratchet, whose key for it opened it already): dropped again.
        _ = try second.send(on: link2, capturedNotice)
        try untilDeadline("Alice ignores the notice of the earlier session", seconds: 20) { logged(handedAgain) == 2 }
        XCTAssertEqual(try alice.conversation("Sam"), afterResend, "no status changed, no row added")
        XCTAssertEqual(try messages(alice, "Sam").filter { held.contains($0.id) }.map(\.status), [.sent, .sent])
        XCTAssertEqual(logged("Sam could not read 2 message(s)"), 1, logLines.all.joined(separator: "\n"))
        XCTAssertTrue(aliceEngine.stop())
    }
}
