import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
import XCTest

/// `--quota-bytes` against a real rchat-relay: a mailbox holds at most that many payload
/// bytes of conversation frames (held, or handed over and not yet acknowledged); a frame
/// beyond it is refused with `byteQuotaExceeded` and nothing is held. The count follows
/// acknowledgements, a mailbox move, a `--persist` restart and expiry; message requests
/// count apart.
final class RelayByteQuotaTests: XCTestCase {
    var relay: RelayProcess!

    override func setUp() { relay = RelayProcess() }
    override func tearDown() { relay.stop(signal: SIGKILL); relay = nil }

    static let quota = 1 << 20
    static let big = RelayProtocol.maximumPayloadBytes
    /// 15 full frames and one a byte short: one byte under the quota, in 16 frames.
    static let justUnder: [[UInt8]] = (0..<15).map { [UInt8](repeating: UInt8($0), count: big) } + [[UInt8](repeating: 15, count: big - 1)]
    static func frames(_ count: Int) -> [[UInt8]] { (0..<count).map { _ in [UInt8](repeating: 0xAB, count: big) } }

    private func start(_ extra: [String] = [], fakeNow: Int64? = nil, samePort: Bool = false) throws -> RelayAddress {
        try relay.start(["--quota-bytes", String(Self.quota)] + extra, fakeNow: fakeNow, samePort: samePort)
    }

    /// Sends each payload on `link` and expects each to be taken ("Sent").
    private func hold(_ payloads: [[UInt8]], on link: LinkID, by client: RelayClient, forwarded: Bool = false,
                      file: StaticString = #filePath, line: UInt = #line) throws {
        let seqs = try payloads.map { try client.send(on: link, $0, flush: false) }
        try client.flush()
        for seq in seqs {
            XCTAssertEqual(client.nextEvent(timeout: 10), .sent(seq: seq, forwarded: forwarded), file: file, line: line)
        }
    }

    /// Sends `payload` on `link` and expects it refused for the byte quota.
    private func expectRefused(_ payload: [UInt8], on link: LinkID, by client: RelayClient,
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let seq = try client.send(on: link, payload)
        XCTAssertEqual(client.nextEvent(timeout: 5), .refused(seq: seq, reason: .byteQuotaExceeded), file: file, line: line)
    }

    /// A and B linked again (after a restart): B connects, links and goes, leaving what it
    /// was handed unacknowledged. Returns A's client and the link.
    private func relink(_ address: RelayAddress, _ keyA: SigningKey, _ keyB: SigningKey,
                        file: StaticString = #filePath, line: UInt = #line) throws -> (RelayClient, LinkID) {
        let a = try RelayClient.connect(to: address, mailboxKey: keyA)
        XCTAssertEqual(a.nextEvent(timeout: 5), .drained, file: file, line: line)
        let b = try RelayClient.connect(to: address, mailboxKey: keyB)
        let code = Random.bytes(32)
        try a.present([code])
        try b.present([code])
        guard case .linked(let link, _)? = a.nextEvent(timeout: 5) else {
            XCTFail("not linked again", file: file, line: line)
            throw RelayClientError.closed
        }
        b.close()
        XCTAssertEqual(a.nextEvent(timeout: 5), .peerGone(link: link), file: file, line: line)
        return (a, link)
    }

    /// A linked pair whose B has gone (after `beforeLeaving`): what A sends is held for B.
    private func linkWithBOffline(_ address: RelayAddress, beforeLeaving: (RelayClient) throws -> Void = { _ in },
                                  file: StaticString = #filePath, line: UInt = #line) throws -> LinkedPair {
        let pair = try link(address, file: file, line: line)
        try beforeLeaving(pair.b)
        pair.b.close()
        XCTAssertEqual(pair.a.nextEvent(timeout: 5), .peerGone(link: pair.link), file: file, line: line)
        return pair
    }

    func testAFrameBeyondTheByteQuotaIsRefusedAndAcknowledgingMakesRoom() throws {
        let address = try start()
        let pair = try linkWithBOffline(address)
        try hold(Self.justUnder, on: pair.link, by: pair.a)
        try expectRefused([1, 2], on: pair.link, by: pair.a)   // one byte over
        try hold([[3]], on: pair.link, by: pair.a)              // exactly the quota
        try expectRefused([4], on: pair.link, by: pair.a)

        // Nothing refused was held: B is handed 17 frames, the 16 big ones and the byte.
        let b = try RelayClient.connect(to: address, mailboxKey: pair.keyB)
        defer { b.close() }
        XCTAssertEqual(b.heldAtConnect, 17)
        let got = b.expectDeliveries(17, timeout: 10)
        XCTAssertEqual(got.map(\.payload), Self.justUnder + [[3]])
        // Handed over but not acknowledged: still counted.
        try expectRefused([5], on: pair.link, by: pair.a)
        // One 64 KiB frame acknowledged: room for exactly one again, and no more.
        try b.acknowledge([got[0].id])
        XCTAssertEqual(try b.eventsUntilPong(), [], "the acknowledgement was taken")
        try hold(Self.frames(1), on: pair.link, by: pair.a, forwarded: true)
        try expectRefused([6], on: pair.link, by: pair.a)
        XCTAssertEqual(b.expectDeliveries(1).map(\.payload.count), [Self.big])
        XCTAssertTrue(relay.stderr.contains("\(Self.quota) bytes per mailbox"), "the start line names the byte quota: \(relay.stderr)")
    }

    /// Strangers' message requests never take the room a friend's frames need, and the byte
    /// quota does not refuse them either (they have a quota and a rate of their own).
    func testMessageRequestsCountApartFromTheByteQuota() throws {
        let address = try start()
        var token: InviteToken?
        let pair = try linkWithBOffline(address) { b in
            token = try b.registerInvites(salts: [Random.bytes(InviteToken.saltBytes)])[0]
            XCTAssertEqual(try b.eventsUntilPong(), [])
        }
        let invite = try XCTUnwrap(token)
        let stranger = try RelayClient.connect(to: address, mailboxKey: .generate())
        defer { stranger.close() }
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .drained)
        // 20 × 64 KiB of requests: more than the byte quota, all held.
        let seqs = try (0..<20).map { _ in try stranger.sendRequest(to: invite, Self.frames(1)[0], flush: false) }
        try stranger.flush()
        for seq in seqs { XCTAssertEqual(stranger.nextEvent(timeout: 10), .sent(seq: seq, forwarded: false)) }
        // The friend still has the whole quota.
        try hold(Self.frames(16), on: pair.link, by: pair.a)
        try expectRefused([1], on: pair.link, by: pair.a)
        let b = try RelayClient.connect(to: address, mailboxKey: pair.keyB)
        defer { b.close() }
        XCTAssertEqual(b.heldAtConnect, 36)
    }

    /// A moved mailbox brings its count to the new one; the old one starts from nothing.
    func testAMailboxMoveCarriesTheCount() throws {
        let address = try start()
        let pair = try linkWithBOffline(address)
        try hold(Self.justUnder, on: pair.link, by: pair.a)
        let moved = try RelayClient.connect(to: address, mailboxKey: .generate())
        defer { moved.close() }
        XCTAssertEqual(moved.nextEvent(timeout: 5), .drained)
        try moved.moveMailbox(from: pair.keyB)
        let got = moved.expectDeliveries(16, timeout: 10)
        XCTAssertEqual(got.map(\.payload), Self.justUnder)
        let code = Random.bytes(32)
        try pair.a.present([code])
        try moved.present([code])
        guard case .linked(let newLink, _)? = pair.a.nextEvent(timeout: 5) else { return XCTFail("not linked") }
        XCTAssertEqual(moved.nextEvent(timeout: 5), .linked(link: newLink, code: code))
        try expectRefused([1, 2], on: newLink, by: pair.a)
        // The old mailbox holds nothing now: frames on the old link (held for it) have its whole quota.
        try hold(Self.frames(16), on: pair.link, by: pair.a)
        try expectRefused([3], on: pair.link, by: pair.a)
        // The new mailbox acknowledges one frame of what moved: room for one.
        try moved.acknowledge([got[0].id])
        XCTAssertEqual(try moved.eventsUntilPong(), [])
        try hold(Self.frames(1), on: newLink, by: pair.a, forwarded: true)
        try expectRefused([4, 4], on: newLink, by: pair.a)   // one byte under, so two over
    }

    /// With --persist the count is recomputed from what is loaded: the same after a kill, and
    /// without what expired (72 h) once it has.
    func testTheCountSurvivesARestartAndLosesWhatExpired() throws {
        let t0: Int64 = 1_700_000_000
        let persist = ["--persist", relay.persistPath]
        var address = try start(persist, fakeNow: t0)
        let pair = try linkWithBOffline(address)
        try hold(Self.frames(8), on: pair.link, by: pair.a)                    // half, at t0
        relay.stop(signal: SIGKILL)

        address = try start(persist, fakeNow: t0 + 48 * 3600, samePort: true)
        var (a, link) = try relink(address, pair.keyA, pair.keyB)
        try hold(Array(Self.justUnder.suffix(8)), on: link, by: a)            // the rest but a byte, at t0 + 48 h
        try expectRefused([1, 2], on: link, by: a)
        relay.stop(signal: SIGKILL)

        address = try start(persist, fakeNow: t0 + 48 * 3600, samePort: true)
        (a, link) = try relink(address, pair.keyA, pair.keyB)
        try expectRefused([1, 2], on: link, by: a)
        try hold([[3]], on: link, by: a)
        try expectRefused([4], on: link, by: a)
        relay.stop(signal: SIGKILL)

        // 73 h after the first half: it expired and no longer counts; the rest still does.
        address = try start(persist, fakeNow: t0 + 73 * 3600, samePort: true)
        XCTAssertTrue(relay.stderr.contains("dropped 8 expired"), relay.stderr)
        (a, link) = try relink(address, pair.keyA, pair.keyB)
        try hold(Self.frames(8), on: link, by: a)
        try expectRefused([5], on: link, by: a)
        let b = try RelayClient.connect(to: address, mailboxKey: pair.keyB)
        defer { b.close() }
        XCTAssertEqual(b.heldAtConnect, 17)
    }
}
