import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import XCTest

/// What a stranger who read someone's contact code can try against real `rchat` and
/// `rchat-relay` processes: claim the invite token, or hand out a doctored copy of the code.
final class StrangerAttackTests: EngineTestCase {
    /// A stranger's own connection to the relay, speaking the relay protocol.
    private func stranger() throws -> RelayClient {
        let client = try RelayClient.connect(to: try RelayAddress(parsing: world.relayAddress), mailboxKey: .generate())
        XCTAssertEqual(client.nextEvent(timeout: 5), .drained)
        return client
    }

    /// Everything a stranger can register, given the token printed in `code`: the token's
    /// bytes as a salt and a few others. Returns once the relay has processed them.
    private func tryToClaim(_ code: ContactCode, as client: RelayClient) throws {
        let claimed = try client.registerInvites(salts: [code.inviteToken, Random.bytes(16), [UInt8](repeating: 0, count: 16)])
        XCTAssertFalse(claimed.map(\.bytes).contains(code.inviteToken))
        try client.ping(7)
        XCTAssertEqual(client.nextEvent(timeout: 5), .pong(7))
    }

    /// A first message from Alice goes to the invite token in Sam's code. A stranger who
    /// registers that token before Sam ever connects (and again after an in-memory relay
    /// restart) must not receive it: the relay refuses the request as "no such invite", it
    /// stays Sending at Alice, and reaches Sam once he is online.
    func testAStrangerCannotClaimAnInviteTokenFromACode() throws {
        try world.makePair()
        let samCode = try ContactCode(parsing: try world.code("sam"))
        let thief = try stranger()
        try tryToClaim(samCode, as: thief)

        try world.startSync("alice")
        let first = try world.send("alice", to: "Sam", "first words")
        try world.eventually("the relay refuses Alice's request", timeout: 15) {
            self.world.syncLog("alice").contains("no such invite")
        }
        XCTAssertEqual(try world.status("alice", "Sam", first), "Sending", "nothing took the request")
        XCTAssertNil(thief.nextEvent(timeout: 0.3), "the stranger got something")

        try world.startSync("sam")
        try world.waitForStatus("alice", "Sam", first, "Delivered", timeout: 30)
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.direction == "in" }.map(\.text), ["first words"])
        XCTAssertNil(thief.nextEvent(timeout: 0.1), "the stranger got something")
        thief.close()

        // An in-memory relay forgets every registration when it restarts; a stranger who is
        // first after the restart still cannot take Sam's token.
        world.stopSync("sam")
        world.stopSync("alice")
        world.stopRelay()
        try world.startRelay(samePort: true)
        let second = try stranger()
        try tryToClaim(samCode, as: second)
        let again = try world.send("alice", to: "Sam", "after the restart")
        try world.startSync("alice")
        // Alice and Sam have a session now, but Sam is offline with no link: the message
        // waits in Alice's outbox (Sending) until both are online — never at the stranger.
        try world.startSync("sam")
        try world.waitForStatus("alice", "Sam", again, "Delivered", timeout: 30)
        XCTAssertNil(second.nextEvent(timeout: 0.1), "the stranger got something")
        second.close()
    }

    /// With `--persist`, registrations survive a restart; a stranger's registration after
    /// it still cannot take the token over.
    func testAPersistedInviteStaysWithItsOwner() throws {
        world.stopRelay()
        try world.startRelay(samePort: true, arguments: ["--persist", world.box.path("relay.db")])
        try world.makePair()
        let samCode = try ContactCode(parsing: try world.code("sam"))
        try world.startSync("sam")
        try world.eventually("Sam's engine registered its invite", timeout: 15) {
            self.world.syncLog("sam").contains("connected to relay")
        }
        world.stopSync("sam")
        world.stopRelay()
        try world.startRelay(samePort: true, arguments: ["--persist", world.box.path("relay.db")])
        let thief = try stranger()
        try tryToClaim(samCode, as: thief)
        try world.startSync("alice")
        let first = try world.send("alice", to: "Sam", "held for Sam")
        try world.waitForStatus("alice", "Sam", first, "Sent")
        XCTAssertNil(thief.nextEvent(timeout: 0.3), "the stranger got something")
        try world.startSync("sam")
        try world.waitForStatus("alice", "Sam", first, "Delivered", timeout: 30)
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.direction == "in" }.map(\.text), ["held for Sam"])
        thief.close()
    }

    /// A genuine code with another relay or invite token swapped in (its checksum
    /// recomputed) is refused with one line and exit 2, for a new contact and for a known one
    /// (whose relay it would otherwise move), and nothing is stored.
    func testADoctoredCodeIsRefusedWhole() throws {
        try world.makeAccount("alice")
        try world.makeAccount("sam")
        let genuine = try ContactCode(parsing: try world.code("sam"))
        let attackerRelay = RelayAddress(host: "127.0.0.1", port: 4444, publicKey: AgreementKey.generate().publicKey)

        var movedRelay = genuine
        movedRelay.relay = attackerRelay
        var otherToken = genuine
        otherToken.inviteToken = Random.bytes(16)
        var renamed = genuine
        renamed.name = "Sam (work)"
        let home = world.box.path("alice-home")
        for doctored in [movedRelay, otherToken, renamed] {
            XCTAssertNoThrow(try ContactCode(parsing: doctored.text), "the checksum is right: only the signature catches it")
            let before = world.box.snapshot(home)
            let run = try world.box.rchat("alice", ["add", doctored.text])
            XCTAssertFailsCleanly(run, status: 2, mentions: "signature")
            XCTAssertEqual(world.box.snapshot(home), before, "a refused code stores nothing")
        }
        XCTAssertEqual(try world.contacts("alice"), [])

        // Known contact: re-entering a doctored code does not move Sam to another relay.
        try world.add("alice", "sam")
        try world.add("sam", "alice")
        let before = world.box.snapshot(home)
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["add", movedRelay.text]), status: 2, mentions: "signature")
        XCTAssertEqual(world.box.snapshot(home), before)
        try world.startSync("alice")
        try world.startSync("sam")
        let hello = try world.send("alice", to: "Sam", "still on the real relay")
        try world.waitForStatus("alice", "Sam", hello, "Delivered")

        // A code from before codes were signed says what to do.
        let old = genuine.text.replacingOccurrences(of: "rchat-2-", with: "rchat-1-")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["add", old]), status: 2, mentions: "ask for a new code")
    }
}
