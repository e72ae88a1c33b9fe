import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
@testable import RChatEngine
#if canImport(Glibc)
import Glibc
#endif

/// A stolen copy of Sam's account keys, without his device key, can
/// never make Alice's engine resend anything by itself. An attacker built from the relay
/// client and the conversation cryptography holds Sam's account key and a device key of its
/// own (certified by that account key), meets Alice's engine at a real relay, completes a
/// handshake, and sends could-not-read notices: one signed by the ACCOUNT key, one by a
/// random key. Each changes nothing but a log line. Then, as a check that the attacker's
/// frames do reach Alice, a notice signed by its own certified device key: Not delivered
/// with Resend — the new-phone path, never Resent.
final class RecoveryForgedNoticeTests: RelayEngineTestCase {
    // MARK: the test

    /// Sam's held messages and an attacker in a session with Alice's engine: it holds Sam's
    /// stolen account key and a device key of its own that the stolen key certified.
    struct Attack {
        let alice: AccountService
        let aliceEngine: EngineThread
        let held: [MessageID]
        let client: RelayClient
        let link: LinkID
        let secret: ConversationSecret
        let session: Session
        let attackerDevice: SigningKey
        let stolen: SigningKey
        let peer: PeerSession

        /// A could-not-read notice naming the held messages, signed by `key`, on the link.
        mutating func sendNotice(signedBy key: SigningKey) throws {
            let notice = CouldNotReadNotice(messageIDs: held, conversation: secret, session: session.id,
                                            time: Int64(Date().timeIntervalSince1970))
            let envelope = peer.seal(.notice, notice.signed(by: key), conversation: secret)
            _ = try client.send(on: link, LinkFrame.envelope(envelope).encoded)
        }
    }

    func attack() throws -> Attack {
        let address = try startRelay()
        let alice = try account("Alice", relay: address)
        let sam = try account("Sam", relay: address)
        let samIdentity = try sam.identity()
        let aliceIdentity = try alice.identity()
        _ = try alice.addContact(samIdentity.contactCode(device: sam.device), name: nil)
        _ = try sam.addContact(aliceIdentity.contactCode(device: alice.device), name: nil)

        // A conversation with a session; then Sam goes away and Alice writes two messages
        // that the relay holds for him.
        let aliceEngine = try sessionThenSamAway(alice: alice, sam: sam, samLogged: false)
        let held = [try alice.send(to: "Sam", content: .text("held 1")), try alice.send(to: "Sam", content: .text("held 2"))]
        aliceEngine.engine.wake()
        try waitForStatus(alice, "Sam", held, .sent)

        // The attacker: Sam's stolen account key, its own device key (which the stolen key
        // can certify), a mailbox of its own; it presents the codes of a side that started over.
        let stolen = samIdentity.accountKey
        let attackerDevice = SigningKey.generate()
        let secret = try ConversationSecret(myAccount: stolen, peerAccountKey: aliceIdentity.accountKey.publicKey)
        let client = try RelayClient.connect(to: address, mailboxKey: SigningKey.generate(), timeout: 10)
        rawClients.append(client)
        try client.present(RendezvousCode.presented(for: secret, at: Int64(Date().timeIntervalSince1970), .startedOver).map(\.bytes))
        let (link, code) = try nextLink(client)

        let me = Handshake.LocalIdentity(account: stolen, device: attackerDevice)
        let pinnedAlice = Handshake.PinnedKeys(accountKey: aliceIdentity.accountKey.publicKey, deviceKey: alice.device.publicKey)
        let session: Session
        if Handshake.Role.of(myAccountKey: stolen.publicKey, peerAccountKey: aliceIdentity.accountKey.publicKey) == .initiator {
            let initiator = try Handshake.Initiator(me: me, peer: pinnedAlice, reconnectCounter: nil,
                                                    prologue: Handshake.linkPrologue(code: code))
            _ = try client.send(on: link, LinkFrame.handshakeFirst(initiator.firstMessage()).encoded)
            session = try initiator.finish(try linkPayload(client, link, 2))
        } else {
            let responder = try Handshake.Responder(me: me, peer: pinnedAlice, reconnectCounter: nil,
                                                    prologue: Handshake.linkPrologue(code: code))
            let (reply, s) = try responder.respond(to: try linkPayload(client, link, 1))
            _ = try client.send(on: link, LinkFrame.handshakeReply(reply).encoded)
            session = s
        }
        XCTAssertEqual(session.peer.accountKey, aliceIdentity.accountKey.publicKey)
        try untilDeadline("Alice's engine starts a session with the attacker", seconds: 20) {
            logLines.all.filter { $0.contains("secure session with Sam started") }.count >= 2
        }

        return Attack(alice: alice, aliceEngine: aliceEngine, held: held, client: client, link: link, secret: secret,
                      session: session, attackerDevice: attackerDevice, stolen: stolen, peer: PeerSession(session))
    }

    func testNoticesNotSignedByAnyCertifiedDeviceKeyChangeNothingButALogLine() throws {
        var attack = try attack()
        let alice = attack.alice, held = attack.held
        let before = try alice.conversation("Sam")
        XCTAssertEqual(try messages(alice, "Sam").filter { held.contains($0.id) }.map(\.status), [.sent, .sent])

        // Signed by the stolen account key, then by a random key: rejected, nothing changes.
        try attack.sendNotice(signedBy: attack.stolen)
        try attack.sendNotice(signedBy: SigningKey.generate())
        let rejection = "Alice: rejected a could-not-read notice from Sam not signed by their device key"
        try untilDeadline("two rejected notices in Alice's log", seconds: 20) {
            logLines.all.filter { $0.hasPrefix(rejection) }.count == 2 || logLines.all.contains { $0.contains("could not read") }
        }
        XCTAssertEqual(logLines.all.filter { $0.hasPrefix(rejection) }.count, 2, logLines.all.joined(separator: "\n"))
        XCTAssertEqual(try alice.conversation("Sam"), before, "a forged notice changes no status and adds no row")
        XCTAssertFalse(logLines.all.contains { $0.contains("could not read") }, logLines.all.joined(separator: "\n"))

        // The control: a notice signed by the attacker's own certified (unpinned) device key
        // is read — Not delivered with Resend — and still nothing is resent automatically.
        try attack.sendNotice(signedBy: attack.attackerDevice)
        try waitForStatus(alice, "Sam", held, .notDelivered)
        let after = try messages(alice, "Sam")
        XCTAssertFalse(after.contains { $0.resent }, "\(after)")
        let rows = try rows(alice, "Sam")
        XCTAssertEqual(rows.map(\.text), ["Sam is using a new device. Enter their code again to verify it.",
                                          "2 messages couldn't be read on Sam's phone."])
        XCTAssertEqual(rows.last?.action, .resend)
        XCTAssertEqual(Set(rows.last?.messageIDs ?? []), Set(held))
        XCTAssertTrue(logLines.all.contains { $0.contains("Sam could not read 2 message(s): 0 resent automatically, 2 not delivered") },
                      logLines.all.joined(separator: "\n"))
        XCTAssertEqual(logLines.all.filter { $0.hasPrefix(rejection) }.count, 2)
        XCTAssertTrue(attack.aliceEngine.stop())
    }

    /// A notice the unpinned device signed, held by the relay while Alice's engine was
    /// stopped and handed over at once when a new engine connects, before any link is up:
    /// the session it came in was made in the engine's previous run, so only the row that
    /// recorded the device (a handshake proved it) can say whose it is. It counts — Not
    /// delivered with Resend — instead of being rejected for good, which left what that device
    /// could not read Sent for ever (found by simulation seed 42).
    func testANoticeFromAnUnpinnedDeviceHeldOverARestartStillCounts() throws {
        var attack = try attack()
        XCTAssertTrue(attack.aliceEngine.stop())
        try attack.sendNotice(signedBy: attack.attackerDevice)   // held by the relay for Alice
        let restarted = try startEngine(attack.alice, logged: true)
        try waitForStatus(attack.alice, "Sam", attack.held, .notDelivered)
        XCTAssertFalse(logLines.all.contains { $0.contains("not signed by their device key") }, logLines.all.joined(separator: "\n"))
        XCTAssertEqual(try rows(attack.alice, "Sam").last?.action, .resend)
        XCTAssertTrue(restarted.stop())
    }
}
