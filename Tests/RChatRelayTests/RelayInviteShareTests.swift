import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
import XCTest

/// The invite registry is no relay-wide share one client can fill (issue 27, finding 12):
/// one host registers at most a quarter of `--max-invites` (and `--max-invites-per-host`),
/// and an invite not registered again within `--invite-expiry` is forgotten, unless its
/// mailbox is connected (an engine registers its invite at every connection).
final class RelayInviteShareTests: XCTestCase {
    var relay: RelayProcess!

    override func setUp() { relay = RelayProcess() }
    override func tearDown() { relay.stop(signal: SIGKILL); relay = nil }

    /// Registers `count` fresh salts for `client`'s mailbox; returns once the relay took them
    /// (a ping after them was answered).
    private func register(_ client: RelayClient, _ count: Int, file: StaticString = #filePath, line: UInt = #line) throws -> [InviteToken] {
        let tokens = try client.registerInvites(salts: (0..<count).map { _ in Random.bytes(InviteToken.saltBytes) })
        try client.ping(77)
        while let event = client.nextEvent(timeout: 5) {
            if case .pong(77) = event { return tokens }
        }
        XCTFail("no pong after registering", file: file, line: line)
        return tokens
    }

    /// Whether a stranger's message request to `token` is taken (true) or refused as an
    /// unknown invite (false).
    private func isKnown(_ token: InviteToken, by stranger: RelayClient, file: StaticString = #filePath, line: UInt = #line) throws -> Bool {
        let seq = try stranger.sendRequest(to: token, Array("hello".utf8))
        while let event = stranger.nextEvent(timeout: 5) {
            switch event {
            case .sent(seq, _): return true
            case .refused(seq, .unknownInvite): return false
            case .refused(seq, let other): XCTFail("refused as \(other)", file: file, line: line); return false
            default: continue
            }
        }
        XCTFail("no answer to the request", file: file, line: line)
        return false
    }

    func testFreshMailboxesFromOneHostCannotFillTheRegistry() throws {
        let address = try relay.start(["--max-invites", "64"])
        var attackers: [RelayClient] = []
        defer { for c in attackers { c.close() } }
        var tokens: [InviteToken] = []
        for _ in 0..<5 {
            let client = try RelayClient.connect(to: address, mailboxKey: .generate(), timeout: 5, from: "127.0.0.2")
            attackers.append(client)
            XCTAssertEqual(client.nextEvent(timeout: 5), .drained)
            tokens += try register(client, RelayProtocol.maximumInvitesPerRegister)
        }
        let stranger = try RelayClient.connect(to: address, mailboxKey: .generate(), from: "127.0.0.4")
        defer { stranger.close() }
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .drained)
        let known = try tokens.filter { try isKnown($0, by: stranger) }.count
        XCTAssertEqual(known, 16, "one host registers a quarter of --max-invites, no more")

        let user = try RelayClient.connect(to: address, mailboxKey: .generate(), from: "127.0.0.3")
        defer { user.close() }
        XCTAssertEqual(user.nextEvent(timeout: 5), .drained)
        let mine = try register(user, 1)[0]
        XCTAssertTrue(try isKnown(mine, by: stranger), "another host still registers its invite")
        XCTAssertTrue(relay.stderr.contains("invites registered, its limit; ignored"), relay.stderr)
    }

    func testThePerHostOptionBoundsAHost() throws {
        let address = try relay.start(["--max-invites-per-host", "3"])
        let client = try RelayClient.connect(to: address, mailboxKey: .generate(), from: "127.0.0.2")
        defer { client.close() }
        XCTAssertEqual(client.nextEvent(timeout: 5), .drained)
        let tokens = try register(client, 5)
        let stranger = try RelayClient.connect(to: address, mailboxKey: .generate(), from: "127.0.0.4")
        defer { stranger.close() }
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .drained)
        XCTAssertEqual(try tokens.map { try isKnown($0, by: stranger) }, [true, true, true, false, false])
        // Registering a known one again refreshes it, and takes nothing more.
        _ = try client.registerInvites(salts: [Random.bytes(InviteToken.saltBytes)])
        XCTAssertEqual(try tokens.map { try isKnown($0, by: stranger) }, [true, true, true, false, false])
    }

    /// Real seconds, polled: an owner gone for longer than the expiry loses its invite; an
    /// owner connected all along keeps its own past several expiries.
    func testAnInviteNotRegisteredAgainExpiresAndAConnectedOwnersIsKept() throws {
        let expiry = 2.0
        let address = try relay.start(["--invite-expiry", "2"])
        let stranger = try RelayClient.connect(to: address, mailboxKey: .generate())
        defer { stranger.close() }
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .drained)
        let gone = try RelayClient.connect(to: address, mailboxKey: .generate())
        XCTAssertEqual(gone.nextEvent(timeout: 5), .drained)
        let goneToken = try register(gone, 1)[0]
        gone.close()
        let connected = try RelayClient.connect(to: address, mailboxKey: .generate())
        defer { connected.close() }
        XCTAssertEqual(connected.nextEvent(timeout: 5), .drained)
        let kept = try register(connected, 1)[0]
        let registeredAt = Date()

        XCTAssertNotNil(waitFor(timeout: 4 * expiry, interval: 0.1) { try? isKnown(goneToken, by: stranger) == false ? true : nil },
                        "the gone owner's invite is forgotten")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(registeredAt), expiry - 1)
        // The connected owner's, polled until three expiries have passed since it registered.
        while Date().timeIntervalSince(registeredAt) < 3 * expiry {
            XCTAssertTrue(try isKnown(kept, by: stranger), "a connected owner's invite is refreshed")
            _ = waitFor(timeout: 0.25, interval: 0.25) { connected.nextEvent(timeout: 0) }
        }
        XCTAssertTrue(relay.stderr.contains("invite sweep: forgot 1 invites"), relay.stderr)
    }

    /// On relay time (RCHAT_FAKE_NOW) across `--persist` restarts: each invite keeps the time
    /// it was last registered, and one older than the expiry (30 days) is gone at the load.
    func testPersistedInvitesKeepTheirTimeAndExpireAtLoad() throws {
        let day: Int64 = 86_400, start: Int64 = 1_800_000_000
        var address = try relay.start(["--persist", relay.persistPath], fakeNow: start)
        let old = try RelayClient.connect(to: address, mailboxKey: .generate())
        XCTAssertEqual(old.nextEvent(timeout: 5), .drained)
        let oldToken = try register(old, 1)[0]
        old.close()
        relay.stop()

        address = try relay.start(["--persist", relay.persistPath], fakeNow: start + 29 * day, samePort: true)
        var stranger = try RelayClient.connect(to: address, mailboxKey: .generate())
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .drained)
        XCTAssertTrue(try isKnown(oldToken, by: stranger), "29 days: still registered")
        let newer = try RelayClient.connect(to: address, mailboxKey: .generate())
        XCTAssertEqual(newer.nextEvent(timeout: 5), .drained)
        let newToken = try register(newer, 1)[0]
        newer.close()
        stranger.close()
        relay.stop()

        address = try relay.start(["--persist", relay.persistPath], fakeNow: start + 31 * day, samePort: true)
        stranger = try RelayClient.connect(to: address, mailboxKey: .generate())
        defer { stranger.close() }
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .drained)
        XCTAssertFalse(try isKnown(oldToken, by: stranger), "31 days without registering again: forgotten")
        XCTAssertTrue(try isKnown(newToken, by: stranger), "registered 2 days ago")
    }
}
