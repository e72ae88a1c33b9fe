import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
import XCTest

/// --persist across SIGKILL, and expiry across restarts with RCHAT_FAKE_NOW.
final class RelayPersistenceTests: XCTestCase {
    var relay: RelayProcess!

    override func setUp() { relay = RelayProcess() }
    override func tearDown() { relay.stop(signal: SIGKILL); relay = nil }

    /// Holds `payloads` for B (offline), waiting for each "Sent".
    private func holdForOfflinePeer(_ address: RelayAddress, _ payloads: [[UInt8]]) throws -> LinkedPair {
        let pair = try link(address)
        pair.b.close()
        XCTAssertEqual(pair.a.nextEvent(timeout: 5), .peerGone(link: pair.link))
        let seqs = try payloads.map { try pair.a.send(on: pair.link, $0, flush: false) }
        try pair.a.flush()
        for s in seqs { XCTAssertEqual(pair.a.nextEvent(timeout: 5), .sent(seq: s, forwarded: false)) }
        return pair
    }

    func testHeldFramesSurviveSIGKILLAndTheKeyFileKeepsTheAddress() throws {
        let first = try relay.start(["--persist", relay.persistPath])
        let payloads = (0..<20).map { i in [UInt8](repeating: UInt8(i), count: 256) }
        let pair = try holdForOfflinePeer(first, payloads)
        relay.stop(signal: SIGKILL)
        let attrs = try FileManager.default.attributesOfItem(atPath: relay.persistPath)
        XCTAssertEqual((attrs[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: relay.keyFile)[.posixPermissions] as? NSNumber)?.intValue, 0o600)

        let second = try relay.start(["--persist", relay.persistPath], samePort: true)
        XCTAssertEqual(second, first, "same key file, same address")
        let b = try RelayClient.connect(to: second, mailboxKey: pair.keyB)
        XCTAssertEqual(b.heldAtConnect, 20)
        let got = b.expectDeliveries(20)
        XCTAssertEqual(got.map(\.payload), payloads)
        XCTAssertEqual(got.first?.origin, .link(code: pair.code))
        // Acknowledge half, then kill again: only the other half comes back.
        try b.acknowledge(got.prefix(10).map(\.id))
        try b.ping(7)
        XCTAssertEqual(b.nextEvent(timeout: 5), .pong(7))
        relay.stop(signal: SIGKILL)
        let third = try relay.start(["--persist", relay.persistPath], samePort: true)
        let b2 = try RelayClient.connect(to: third, mailboxKey: pair.keyB)
        XCTAssertEqual(b2.expectDeliveries(10).map(\.payload), Array(payloads.suffix(10)))
        // The file holds no plaintext payload bytes.
        let raw = try Data(contentsOf: URL(fileURLWithPath: relay.persistPath))
        XCTAssertNil(raw.range(of: Data(repeating: 15, count: 64)))
    }

    func testInviteRegistrationsSurviveARestart() throws {
        let address = try relay.start(["--persist", relay.persistPath])
        let ownerKey = SigningKey.generate()
        let owner = try RelayClient.connect(to: address, mailboxKey: ownerKey)
        let token = try owner.registerInvites(salts: [Random.bytes(InviteToken.saltBytes)])[0]
        try owner.ping(1)
        _ = owner.expectEvent() // drained
        XCTAssertEqual(owner.nextEvent(timeout: 5), .pong(1))
        owner.close()
        relay.stop()
        let again = try relay.start(["--persist", relay.persistPath], samePort: true)
        let stranger = try RelayClient.connect(to: again, mailboxKey: .generate())
        let s = try stranger.sendRequest(to: token, [7])
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .drained)
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .sent(seq: s, forwarded: false))
    }

    func testExpiryFollowsTheFakeClockAcrossRestarts() throws {
        let t0: Int64 = 1_700_000_000
        let address = try relay.start(["--persist", relay.persistPath], fakeNow: t0)
        let pair = try holdForOfflinePeer(address, [[1]])
        relay.stop()
        // 48 h later: still held; hold one more.
        _ = try relay.start(["--persist", relay.persistPath], fakeNow: t0 + 48 * 3600, samePort: true)
        let a = try RelayClient.connect(to: address, mailboxKey: pair.keyA)
        XCTAssertEqual(a.nextEvent(timeout: 5), .drained)
        XCTAssertEqual(a.relayTime, t0 + 48 * 3600)
        let b = try RelayClient.connect(to: address, mailboxKey: pair.keyB)
        XCTAssertEqual(b.heldAtConnect, 1)
        b.close()
        // Link again (new day's code) and hold a second frame.
        let code = Random.bytes(32)
        let b2 = try RelayClient.connect(to: address, mailboxKey: pair.keyB)
        _ = b2.expectDeliveries(1) // not acknowledged: stays held
        try a.present([code]); try b2.present([code])
        guard case .linked(let l, _)? = a.nextEvent(timeout: 5) else { return XCTFail("no link") }
        b2.close()
        XCTAssertEqual(a.nextEvent(timeout: 5), .peerGone(link: l))
        let s = try a.send(on: l, [2])
        XCTAssertEqual(a.nextEvent(timeout: 5), .sent(seq: s, forwarded: false))
        relay.stop()
        // 73 h after the first: the first expired, the second (25 h old) is handed over.
        _ = try relay.start(["--persist", relay.persistPath], fakeNow: t0 + 73 * 3600, samePort: true)
        XCTAssertTrue(relay.stderr.contains("dropped 1 expired"), relay.stderr)
        let b3 = try RelayClient.connect(to: address, mailboxKey: pair.keyB)
        XCTAssertEqual(b3.heldAtConnect, 1)
        let got = b3.expectDeliveries(1)
        XCTAssertEqual(got.first?.payload, [2])
        XCTAssertEqual(got.first?.heldAt, t0 + 48 * 3600)
        // A lower operator limit applies too: with --hold-hours 24 the second is gone as well.
        relay.stop()
        _ = try relay.start(["--persist", relay.persistPath, "--hold-hours", "24"], fakeNow: t0 + 73 * 3600, samePort: true)
        let b4 = try RelayClient.connect(to: address, mailboxKey: pair.keyB)
        XCTAssertEqual(b4.heldAtConnect, 0)
        XCTAssertEqual(b4.nextEvent(timeout: 5), .drained)
    }
}
