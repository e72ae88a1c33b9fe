import Foundation
import XCTest
import RChatCore
@testable import RChatCrypto
import RChatRelayClient
import RChatWire
@testable import RChatEngine

/// One frame the engine sent on the link, as a raw peer took it.
struct SeenFrame {
    let at: Date
    let payloadBytes: Int
    let kind: EnvelopeKind
    let body: [UInt8]
    let messageID: MessageID
    /// The envelope as the relay handed it.
    var envelope: [UInt8] = []
    var isDummy: Bool { kind == .cover && body.isEmpty }
}

/// A peer played by a raw client of the relay protocol (its own keys) in a session with a
/// real engine: the link, the session, and its send sequence.
final class RawPeer {
    let client: RelayClient
    let link: LinkID
    let session: Session
    let secret: ConversationSecret
    /// The session and its ratchet, as an engine would keep them.
    var state = SavedSessionState()
    var seen: [SeenFrame] = []
    /// Every envelope sent, as it went to the relay.
    var sent: [[UInt8]] = []

    init(_ raw: (client: RelayClient, link: LinkID, session: Session, secret: ConversationSecret)) {
        client = raw.client
        link = raw.link
        session = raw.session
        secret = raw.secret
        state.begin(raw.session, at: 0)
    }

    @discardableResult
    func send(_ kind: EnvelopeKind, _ body: [UInt8], id: MessageID = .random()) throws -> MessageID {
        try send(wireKind: kind.rawValue, body, id: id)
    }

    /// An envelope of a kind this version does not know, as a later version writes it.
    @discardableResult
    func send(laterKind: UInt8, _ body: [UInt8], id: MessageID = .random()) throws -> MessageID {
        try send(wireKind: laterKind, body, id: id)
    }

    private func send(wireKind: UInt8, _ body: [UInt8], id: MessageID) throws -> MessageID {
        try send(envelope: sealed(wireKind: wireKind, body, id: id))
        return id
    }

    /// An envelope sealed (the ratchet moved past it) and not sent yet.
    func sealed(wireKind: UInt8 = EnvelopeKind.message.rawValue, _ body: [UInt8], id: MessageID = .random()) -> [UInt8] {
        state.seal(wireKind: wireKind, messageID: id, body: body, conversation: secret)!
    }

    /// An envelope sealed before, sent now (out of the order it was sealed in, say).
    func send(envelope: [UInt8]) throws {
        sent.append(envelope)
        _ = try client.send(on: link, LinkFrame.envelope(envelope).encoded)
    }

    @discardableResult
    func send(text: String) throws -> MessageID {
        try send(.message, MessageContent.text(text).encoded())
    }
}

extension RelayEngineTestCase {
    /// Alice's engine and Sam played raw (`RawPeer`) at a real relay, in a session Sam
    /// started over in, which Sam's first message confirmed (`sayHi`).
    func aliceWithRawSamInSession() throws -> (alice: AccountService, engine: EngineThread, sam: RawPeer, samIdentity: AccountIdentity) {
        let address = try startRelay()
        let alice = try account("Alice", relay: address)
        let samAccount = try account("Sam", relay: address)
        let samIdentity = try samAccount.identity()
        _ = try alice.addContact(samIdentity.contactCode(device: samAccount.device), name: nil)
        let engine = try startEngine(alice, logged: true)
        let sam = RawPeer(try rawSessionStartingOver(as: samAccount, mailboxKey: samIdentity.mailboxKey, with: alice, relay: address))
        try sayHi(sam)
        return (alice, engine, sam, samIdentity)
    }

    /// The peer writes first (its first frame confirms the session); the engine's Delivered comes back.
    func sayHi(_ peer: RawPeer) throws {
        try peer.send(text: "hi")
        try read(peer, "the engine's Delivered receipt", seconds: 20) { $0.contains { $0.kind == .receiptDelivered } }
    }

    /// Reads what the engine sends on the link (acknowledging each) until `done` holds.
    func read(_ peer: RawPeer, _ what: String, seconds: Double, until done: ([SeenFrame]) -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !done(peer.seen) {
            guard Date() < deadline else {
                throw NSError(domain: "timed out waiting for: \(what); seen \(peer.seen.map { "\($0.kind)" })\n"
                              + logLines.all.joined(separator: "\n"), code: 1)
            }
            guard let event = peer.client.nextEvent(timeout: min(0.5, deadline.timeIntervalSinceNow)) else { continue }
            if case .closed = event { throw NSError(domain: "the relay closed the peer's connection: \(event)", code: 1) }
            guard case .delivery(let d) = event else { continue }
            try peer.client.acknowledge([d.id])
            guard d.link == peer.link, let frame = LinkFrame(d.payloadBytes), case .envelope(let bytes) = frame else { continue }
            let header = try Envelope.openHeader(bytes, conversation: peer.secret)
            let body = try peer.state.open(bytes, header: header, at: 0)
            peer.seen.append(SeenFrame(at: Date(), payloadBytes: d.payloadBytes.count, kind: header.kind, body: body,
                                       messageID: header.messageID, envelope: Array(bytes)))
        }
    }
}
