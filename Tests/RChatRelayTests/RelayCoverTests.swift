import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
import XCTest

/// Cover traffic against a real rchat-relay: a `send` on link 0 is held for the sender's own
/// mailbox — answered as held, counted in its quota, handed back as a `deliver` of its own
/// (origin kind 3), kept across a `--persist` restart until acknowledged.
final class RelayCoverTests: XCTestCase {
    var relay: RelayProcess!

    override func setUp() { relay = RelayProcess() }
    override func tearDown() { relay.stop(signal: SIGKILL); relay = nil }

    /// The next event other than `drained` (which a connection gets when nothing waits).
    private func next(_ client: RelayClient) -> RelayEvent? {
        while let e = client.expectEvent() { if e != .drained { return e } }
        return nil
    }

    static let cover = Padding.padded(Random.bytes(Padding.payloadSizes[0] - Padding.trailerBytes), sizes: Padding.payloadSizes)

    func testCoverOnLinkZeroIsAnsweredAsHeldAndHandedBackToItsOwnMailbox() throws {
        let address = try relay.start(["--quota", "2"])
        let key = SigningKey.generate()
        let client = try RelayClient.connect(to: address, mailboxKey: key, timeout: 5)
        defer { client.close() }
        let seq = try client.send(on: 0, Self.cover)
        XCTAssertEqual(next(client), .sent(seq: seq, forwarded: false), "answered as for an offline peer")
        let back = client.expectDeliveries(1)[0]
        XCTAssertEqual(back.origin, .own)
        XCTAssertNil(back.link)
        XCTAssertEqual(back.payload, Self.cover)

        // It counts in the mailbox's quota until acknowledged: a quota of 2 takes one more.
        let second = try client.send(on: 0, Self.cover)
        XCTAssertEqual(next(client), .sent(seq: second, forwarded: false))
        let third = try client.send(on: 0, Self.cover)
        var events: [RelayEvent] = []
        while events.count < 2, let e = client.nextEvent(timeout: 5) { if case .drained = e { continue }; events.append(e) }
        XCTAssertTrue(events.contains(.refused(seq: third, reason: .quotaExceeded)), "\(events)")
        let held = events.compactMap { if case .delivery(let d) = $0 { d } else { nil } }
        try client.acknowledge([back.id] + held.map(\.id))
        let fourth = try client.send(on: 0, Self.cover)
        XCTAssertEqual(next(client), .sent(seq: fourth, forwarded: false), "room again once acknowledged")
    }

    func testUnacknowledgedCoverSurvivesAPersistRestart() throws {
        let path = relay.directory.appendingPathComponent("held.db").path
        var address = try relay.start(["--persist", path])
        let key = SigningKey.generate()
        let first = try RelayClient.connect(to: address, mailboxKey: key, timeout: 5)
        let seq = try first.send(on: 0, Self.cover)
        XCTAssertEqual(next(first), .sent(seq: seq, forwarded: false))
        _ = first.expectDeliveries(1)
        first.close()
        relay.stop()
        address = try relay.start(["--persist", path], samePort: true)
        let again = try RelayClient.connect(to: address, mailboxKey: key, timeout: 5)
        defer { again.close() }
        let back = again.expectDeliveries(1)[0]
        XCTAssertEqual(back.origin, .own)
        XCTAssertEqual(back.payload, Self.cover)
    }
}

/// The transport's padding: what a client seals, and a relay's `deliver`, is a wire size on
/// the wire, and opens to what was sealed.
final class TransportPaddingTests: XCTestCase {
    private func pair() throws -> (client: TransportCipher, relay: TransportCipher) {
        let relayStatic = AgreementKey.generate(), ephemeral = AgreementKey.generate()
        let (reply, relay, _) = try RelayHandshake.relayRespond(clientHello: RelayHandshake.hello(ephemeral: ephemeral.publicKey),
                                                                relayStatic: relayStatic)
        let (client, _) = try RelayHandshake.clientCipher(ephemeral: ephemeral, relayStatic: relayStatic.publicKey, relayHello: reply)
        return (client, relay)
    }

    func testEveryClientFrameIsAWireSizeAndOpensToWhatWasSealed() throws {
        var (client, relay) = try pair()
        let messages: [ClientMessage] = [
            .ping(7), .acknowledge([1, 2, 3]), .present([[UInt8]](repeating: [UInt8](repeating: 1, count: 32), count: 16)),
            .send(seq: 1, link: 4, payload: Padding.padded([1, 2, 3], sizes: Padding.payloadSizes)),
            .request(seq: 2, token: InviteToken(bytes: [UInt8](repeating: 9, count: 16))!, payload: [UInt8](repeating: 0, count: Padding.payloadSizes[2])),
            .send(seq: 3, link: 4, payload: [UInt8](repeating: 5, count: Padding.payloadSizes.last!)),
        ]
        for message in messages {
            let sealed = client.seal(message.encoded())
            XCTAssertTrue(Padding.wireSizes.contains(4 + sealed.count), "\(message): \(4 + sealed.count) B on the wire")
            XCTAssertEqual(ClientMessage.decode(try relay.open(sealed)), message)
        }
        // A send of a payload of one size is on the wire in the matching size.
        for (payload, wire) in zip(Padding.payloadSizes, Padding.wireSizes) {
            let sealed = client.seal(ClientMessage.send(seq: 9, link: 1, payload: [UInt8](repeating: 0, count: payload)).encoded())
            XCTAssertEqual(4 + sealed.count, wire)
            _ = try relay.open(sealed)
        }
        // The relay's small frames carry the trailer only; a deliver is a wire size.
        XCTAssertEqual(relay.seal(RelayMessage.pong(1).encoded(), fill: .trailerOnly).count, 9 + 4 + 16)
        let deliver = RelayMessage.deliver(Delivery(id: 1, heldAt: 0, link: 2, origin: .link(code: [UInt8](repeating: 3, count: 32)),
                                                    payload: [UInt8](repeating: 0, count: Padding.payloadSizes.last!)))
        XCTAssertEqual(4 + relay.seal(deliver.encoded()).count, Padding.wireSizes.last)
    }
}
