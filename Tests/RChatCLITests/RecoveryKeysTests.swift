import Foundation
import XCTest
import RChatCore
import RChatRelayClient
import RChatWire
import RChatSQL
import RChatStore
import RChatCrypto
@testable import RChatEngine
#if canImport(Glibc)
import Glibc
#endif

/// A contact's keys changed. A rotation (`rchat keys rotate`) resends nothing by
/// itself and says how many messages may not have arrived; Keys don't match lets nothing
/// be sent until the code is entered again.
final class RecoveryKeysTests: RecoveryTestCase {
    /// The account key Alice has pinned for `name`, read from her store.
    private func pinnedAccountKey(_ person: String, for name: String) throws -> [UInt8] {
        let db = try Database(path: world.box.path("\(person)-home") + "/rchat.db", readOnly: true)
        defer { db.close() }
        return try XCTUnwrap(try db.queryOne("SELECT account_key FROM contacts WHERE name = ?", [.text(name)])).blob("account_key")
    }

    /// A thief with a copy of Sam's account keys (his export, on another machine) rotates
    /// them: Alice's session with the thief's device, which she never pinned, must not move
    /// Sam to the thief's new key. The real Sam carries on.
    func testARotationFromADeviceThatIsNotPinnedIsRefused() throws {
        try chattingPair()
        let pinned = try pinnedAccountKey("alice", for: "Sam")
        world.stopSync("sam")
        try world.importAccount("thief", from: try world.exportAccount("sam"))
        try world.expectSuccess(world.box.rchat("thief", ["keys", "rotate"]))
        try world.startSync("thief")
        try world.eventually("Alice refuses the thief's rotation", timeout: 20) {
            self.world.syncLog("alice").contains("a key rotation from Sam in a session with a device key that is not pinned")
        }
        XCTAssertEqual(try pinnedAccountKey("alice", for: "Sam"), pinned, "Sam's key is still the one Alice pinned")
        XCTAssertFalse(try world.rows("alice", "Sam").contains { $0.text.hasPrefix("Sam's keys changed.") })
        XCTAssertFalse(world.syncLog("alice").contains("rotated their account key"))

        world.crashSync("thief")
        try world.startSync("sam")
        try world.deliveredBarrier("sam", to: "Alice", "the real Sam is back")
        let id = try world.send("alice", to: "Sam", "for the real Sam")
        try world.receivedBeforeDeadline("sam", "Alice", [id], timeout: 30)
        XCTAssertEqual(try pinnedAccountKey("alice", for: "Sam"), pinned)
    }

    /// Sam rotates his keys while a message of Alice's was lost with the relay's memory:
    /// Alice gets a row with Resend, the message keeps Sent and goes only when she asks,
    /// and the conversation carries on under the new key both ways.
    /// `keys rotate` moves the account to a new mailbox and invite token: what the relay held
    /// for the old mailbox reaches the new one, a copy of the old keys (an export from
    /// before, in a thief's hands) finds nothing left in the old mailbox, and requests to the
    /// old token go nowhere.
    func testRotationMovesTheMailboxAndTheOldKeysFindNothing() throws {
        try chattingPair()
        let stolen = try world.exportAccount("sam")
        let oldToken = try XCTUnwrap(InviteToken(bytes: try ContactCode(parsing: try world.code("sam")).inviteToken))
        let held = try messagesHeldForSam(2, "held for the old mailbox")
        try world.expectSuccess(world.box.rchat("sam", ["keys", "rotate"]))
        let newCode = try ContactCode(parsing: try world.code("sam"))
        XCTAssertNotEqual(newCode.inviteToken, oldToken.bytes, "a new invite token")

        try world.startSync("sam")
        try world.receivedBeforeDeadline("sam", "Alice", held)
        try world.statusesBeforeDeadline("alice", "Sam", held, "Delivered")
        XCTAssertTrue(world.relayLog().contains("2 held items moved to mailbox"), world.relayLog())

        // The old keys prove the old mailbox, which holds nothing any more.
        try world.importAccount("thief", from: stolen)
        let check = try world.box.rchat("thief", ["check", "--print"])
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertEqual(check.stdout, "", "nothing for the old mailbox")
        XCTAssertEqual(try world.list("thief", "Alice"), [])
        XCTAssertEqual(try world.rows("thief", "Alice"), [])

        // A request to the old token is refused; to the new one, it is taken.
        let stranger = try RelayClient.connect(to: try RelayAddress(parsing: world.relayAddress), mailboxKey: .generate())
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .drained)
        let toOld = try stranger.sendRequest(to: oldToken, [1])
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .refused(seq: toOld, reason: .unknownInvite))
        let toNew = try stranger.sendRequest(to: InviteToken(bytes: newCode.inviteToken)!, [2])
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .sent(seq: toNew, forwarded: true))
        stranger.close()

        // Both keep talking, under the new key, across restarts.
        try world.deliveredBarrier("alice", to: "Sam", "after the move")
        try world.deliveredBarrier("sam", to: "Alice", "from the new mailbox")
        world.stopSync("sam")
        try world.startSync("sam")
        try world.deliveredBarrier("alice", to: "Sam", "after a restart")
    }

    func testKeyRotationResendsNothingByItselfAndMessagesKeepFlowing() throws {
        try chattingPair()
        let lost = try messagesHeldForSam(1, "lost with the relay")
        world.stopRelay(signal: SIGKILL)
        try world.startRelay(samePort: true)
        let rotate = try world.box.rchat("sam", ["keys", "rotate"])
        XCTAssertEqual(rotate.status, 0, rotate.stderr)
        try world.startSync("sam")

        var row: ListedRow?
        try world.eventually("Alice's conversation shows that Sam's keys changed", timeout: 20) {
            row = try self.world.rows("alice", "Sam").first { $0.text.hasPrefix("Sam's keys changed.") }
            return row != nil
        }
        XCTAssertTrue(row!.text.contains("1 message may not have arrived"), row!.text)
        XCTAssertEqual(row!.action, "resend")
        XCTAssertEqual(row!.ids, lost)

        // Nothing automatic: a later message arrives, the lost one stays Sent and unsent.
        try world.deliveredBarrier("alice", to: "Sam", "after your new keys")
        let alice = try world.list("alice", "Sam")
        XCTAssertEqual(alice.first { $0.id == lost[0] }?.status, "Sent")
        XCTAssertFalse(alice.contains { $0.resent }, "\(alice)")
        XCTAssertFalse(try world.rows("alice", "Sam").contains { $0.text.contains("so rChat sent") })
        XCTAssertFalse(try world.list("sam", "Alice").contains { $0.id == lost[0] })
        try world.deliveredBarrier("sam", to: "Alice", "reply under my new keys")
        XCTAssertEqual(try world.contacts("alice").map(\.state), ["ok"])
        XCTAssertEqual(try world.contacts("sam").map(\.state), ["ok"])

        // Alice trusts the change: Resend.
        let resend = try world.box.rchat("alice", ["resend", "Sam", "--all"])
        XCTAssertEqual(resend.status, 0, resend.stderr)
        XCTAssertEqual(resend.lines, ["sending 1 message again"])
        // Nothing is left to resend: the row keeps its text and no longer offers Resend.
        XCTAssertEqual(try world.rows("alice", "Sam").filter { $0.text == row!.text }.map(\.action), [nil])
        try world.waitForStatus("alice", "Sam", lost[0], "Delivered", timeout: 20)
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.id == lost[0] }.map(\.text), ["lost with the relay 1"])

        // Both sides keep working after restarts under the new key.
        world.stopSync("sam")
        world.stopSync("alice")
        try world.startSync("alice")
        try world.startSync("sam")
        try world.deliveredBarrier("alice", to: "Sam", "after restarts")
        try world.deliveredBarrier("sam", to: "Alice", "after restarts too")
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// Resend goes only to the keys a message was written for: a message that failed while
    /// Sam was blocked can be resent after unblocking, but once Sam rotated his keys it is
    /// refused in one line (named by id, or with --all), while the rotation row's own offer
    /// (the user trusting the change) still works.
    func testResendIsRefusedForAMessageWrittenBeforeTheKeysChanged() throws {
        try chattingPair()
        XCTAssertEqual(try world.box.rchat("alice", ["block", "Sam"]).status, 0)
        let failed = try world.send("alice", to: "Sam", "written while Sam was blocked")
        try world.waitForStatus("alice", "Sam", failed, "Failed to send")
        XCTAssertEqual(try world.box.rchat("alice", ["unblock", "Sam"]).status, 0)
        try world.deliveredBarrier("alice", to: "Sam", "unblocked")   // a new session after the block
        let lost = try messagesHeldForSam(1, "held over the rotation")
        world.stopRelay(signal: SIGKILL)   // an in-memory relay: the held message is lost
        try world.startRelay(samePort: true)

        let rotate = try world.box.rchat("sam", ["keys", "rotate"])
        XCTAssertEqual(rotate.status, 0, rotate.stderr)
        try world.startSync("sam")
        try world.rowBeforeDeadline("alice", "Sam", "Sam's keys changed. 1 message may not have arrived; resend it if you trust the change.")
        try world.deliveredBarrier("sam", to: "Alice", "under my new keys")

        let named = try world.box.rchat("alice", ["resend", "Sam", failed])
        XCTAssertFailsCleanly(named, status: 2, mentions: "a message sent before Sam's keys changed is not sent again")
        XCTAssertEqual(try world.status("alice", "Sam", failed), "Failed to send")
        // --all resends what the rotation row offers and says what it leaves.
        let all = try world.box.rchat("alice", ["resend", "Sam", "--all"])
        XCTAssertEqual(all.status, 0, all.stderr)
        XCTAssertEqual(all.lines, ["sending 1 message again",
                                   "a message sent before Sam's keys changed is not sent again: write it again if you trust their new keys"])
        try world.waitForStatus("alice", "Sam", lost[0], "Delivered", timeout: 20)
        XCTAssertEqual(try world.status("alice", "Sam", failed), "Failed to send")
        XCTAssertFalse(try world.list("sam", "Alice").contains { $0.id == failed })
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// Keys don't match, reached as it happens (a handshake under another account key on the
    /// conversation's link): Failed to send, Resend refused, until Sam's code is entered again.
    func testKeysDontMatchSendsNothingUntilTheCodeIsEnteredAgain() throws {
        try chattingPairWhereAliceAnswers()
        world.stopSync("sam")
        try anotherAccountKeyOnTheLink()
        XCTAssertEqual(try world.contacts("alice").map(\.state), ["keys-dont-match"])
        XCTAssertEqual(try world.rows("alice", "Sam").map(\.text),
                       ["Sam's keys don't match the ones you verified. Nothing can be sent to Sam until you enter their code again."])

        let refused = try world.send("alice", to: "Sam", "not for mismatched keys")
        try world.waitForStatus("alice", "Sam", refused, "Failed to send")
        for args in [["resend", "Sam", refused], ["resend", "Sam", "--all"], ["resend", "Sam"]] {
            let run = try world.box.rchat("alice", args)
            XCTAssertFailsCleanly(run, status: 2, mentions: "code is entered again")
        }
        XCTAssertEqual(try world.status("alice", "Sam", refused), "Failed to send")
        XCTAssertEqual(try world.contacts("alice").map(\.state), ["keys-dont-match"])

        let add = try world.box.rchat("alice", ["add", try world.code("sam")])
        XCTAssertEqual(add.status, 0, add.stderr)
        XCTAssertTrue(add.stdout.contains("verified again"), add.stdout)
        XCTAssertEqual(try world.contacts("alice").map(\.state), ["ok"])
        try world.startSync("sam")
        try world.deliveredBarrier("alice", to: "Sam", "keys checked in person")
        try world.deliveredBarrier("sam", to: "Alice", "glad that's sorted")
        // The refused message never left; now Resend is offered and works.
        XCTAssertFalse(try world.list("sam", "Alice").contains { $0.id == refused })
        let resend = try world.box.rchat("alice", ["resend", "Sam", refused])
        XCTAssertEqual(resend.status, 0, resend.stderr)
        try world.waitForStatus("alice", "Sam", refused, "Delivered", timeout: 20)
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.id == refused }.count, 1)
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// Keys don't match, and Sam is on a new install under new keys (no rotation, no backup):
    /// entering his new code re-pins Sam — the same conversation, its history kept — even
    /// though the account key in it is new; then messages flow both ways.
    func testEnteringANewCodeAfterKeysDontMatchRepinsEvenANewAccountKey() throws {
        let warmUp = try chattingPairWhereAliceAnswers()
        world.stopSync("sam")
        try anotherAccountKeyOnTheLink()
        world.stopSync("alice")
        try FileManager.default.removeItem(atPath: world.box.path("sam-home"))
        try FileManager.default.removeItem(atPath: world.box.path("sam-device"))
        try world.makeAccount("sam")
        try world.add("sam", "alice")

        let add = try world.box.rchat("alice", ["add", try world.code("sam")])
        XCTAssertEqual(add.status, 0, add.stderr)
        XCTAssertEqual(add.lines.first, "Sam verified again: new keys pinned")
        XCTAssertEqual(try world.contacts("alice").map(\.name), ["Sam"])
        XCTAssertEqual(try world.contacts("alice").map(\.state), ["ok"])
        try world.startSync("alice")
        try world.startSync("sam")
        try world.deliveredBarrier("alice", to: "Sam", "to your new keys")
        try world.deliveredBarrier("sam", to: "Alice", "from my new keys")
        XCTAssertTrue(try world.list("alice", "Sam").contains { $0.id == warmUp }, "the conversation and its history stay")
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// Alice and Sam chatting, Sam's account key sorting first: he initiates every handshake
    /// and Alice answers, so a first message on their link reaches her as one from Sam would.
    @discardableResult
    func chattingPairWhereAliceAnswers() throws -> String {
        for _ in 0..<32 {
            try world.makeAccount("alice")
            try world.makeAccount("sam")
            let alice = try ContactCode(parsing: try world.code("alice")).accountKey
            let sam = try ContactCode(parsing: try world.code("sam")).accountKey
            if Handshake.Role.of(myAccountKey: sam, peerAccountKey: alice) == .initiator {
                try world.add("alice", "sam")
                try world.add("sam", "alice")
                try world.startSync("sam")
                try world.startSync("alice")
                return try world.deliveredBarrier("alice", to: "Sam", "warm-up")
            }
            for folder in ["alice-home", "alice-device", "sam-home", "sam-device"] {
                try FileManager.default.removeItem(atPath: world.box.path(folder))
            }
        }
        throw NSError(domain: "no pair in 32 tries had Sam's account key sort first", code: 1)
    }

    /// Someone on Alice and Sam's link (the relay, or whoever it hands their rendezvous code)
    /// opens a handshake with Alice's running sync under an account key of their own; Sam's
    /// sync is stopped. Returns once Alice's side says Keys don't match. The codes come from
    /// Sam's keys here because the test has no relay operator to ask.
    func anotherAccountKeyOnTheLink() throws {
        XCTAssertTrue(world.isSyncRunning("alice"))
        XCTAssertFalse(world.isSyncRunning("sam"))
        let sam = try AccountService(locations: Locations(home: world.box.path("sam-home"), deviceDirectory: world.box.path("sam-device")))
        let aliceCode = try ContactCode(parsing: try world.code("alice"))
        let secret = try ConversationSecret(myAccount: try sam.identity().accountKey, peerAccountKey: aliceCode.accountKey)
        let attacker = try XCTUnwrap((0..<64).lazy.map { _ in Handshake.LocalIdentity(account: .generate(), device: .generate()) }
            .first { Handshake.Role.of(myAccountKey: $0.account.publicKey, peerAccountKey: aliceCode.accountKey) == .initiator })
        let client = try RelayClient.connect(to: try RelayAddress(parsing: world.relayAddress), mailboxKey: .generate())
        defer { client.close() }
        try client.present(RendezvousCode.presented(for: secret, at: Int64(Date().timeIntervalSince1970), .startedOver).map(\.bytes))
        var linked: (LinkID, [UInt8])?
        try world.eventually("the relay links the attacker with Alice", timeout: 20) {
            if case .linked(let link, let code)? = client.nextEvent(timeout: 0.2) { linked = (link, code) }
            return linked != nil
        }
        let (link, code) = try XCTUnwrap(linked)
        let first = try Handshake.Initiator(me: attacker, peer: .init(accountKey: aliceCode.accountKey, deviceKey: aliceCode.deviceKey),
                                            reconnectCounter: nil, prologue: Handshake.linkPrologue(code: code)).firstMessage()
        _ = try client.send(on: link, LinkFrame.handshakeFirst(first).encoded)
        try world.eventually("Alice's side says Keys don't match", timeout: 20) {
            try self.world.contacts("alice").map(\.state) == ["keys-dont-match"]
        }
    }
}
