import RChatCore
import RChatCrypto
import RChatNet
import RChatRelayClient
import RChatWire

/// A relay's side and a client's side of one sealed channel, agreed through the real
/// handshake with the fixed relay key.
enum Channels {
    static func pair() -> (client: TransportCipher, relay: TransportCipher) {
        let ephemeral = AgreementKey.generate()
        let relay = try! RelayHandshake.relayRespond(clientHello: RelayHandshake.hello(ephemeral: ephemeral.publicKey),
                                                     relayStatic: Fixtures.relayKey)
        let (client, _) = try! RelayHandshake.clientCipher(ephemeral: ephemeral, relayStatic: Fixtures.relayKey.publicKey,
                                                           relayHello: relay.reply)
        return (client, relay.cipher)
    }

    /// The frames a decoder cuts from stream bytes (each within the maximum, none empty).
    static func frames(of stream: [UInt8]) -> [[UInt8]] {
        var decoder = FrameDecoder(maximumBodyBytes: RelayProtocol.maximumFrameBytes)
        decoder.append(stream)
        var frames: [[UInt8]] = []
        while true {
            do {
                guard let frame = try decoder.next() else { break }
                precondition(!frame.isEmpty && frame.count <= RelayProtocol.maximumFrameBytes)
                frames.append(frame)
            } catch {
                break
            }
        }
        return frames
    }
}

/// What a client sends the relay: the plaintext hello, the frame cutter, and every sealed
/// body's `ClientMessage` layout (decoding what it encodes back to the same message).
enum ClientFrameTarget: FuzzTarget {
    static let name = "client-frames"

    static func run(_ input: [UInt8]) {
        if let key = RelayHandshake.parseHello(input) { precondition(RelayHandshake.hello(ephemeral: key) == input) }
        _ = Channels.frames(of: input)
        for body in Pieces(input) {
            guard let message = ClientMessage.decode(body) else { continue }
            precondition(ClientMessage.decode(message.encoded()) == message, "a client message does not decode to itself")
        }
    }

    static func seeds() -> [[UInt8]] {
        let link: LinkID = 7
        let messages: [ClientMessage] = [
            .auth(mailboxKey: Fixtures.alice.publicKey, signature: [UInt8](repeating: 1, count: 64)),
            .present([[UInt8](repeating: 2, count: rendezvousCodeBytes)]),
            .registerInvites(salts: [[UInt8](repeating: 3, count: InviteToken.saltBytes)]),
            .send(seq: 1, link: link, payload: Array("hello".utf8)),
            .sendAhead(seq: 2, link: link, payload: [1, 2, 3]),
            .request(seq: 3, token: InviteToken(bytes: [UInt8](repeating: 4, count: 16))!, payload: [9]),
            .acknowledge([1, 2, 3]),
            .ping(42),
            .moveMailbox(oldKey: Fixtures.bob.publicKey, signature: [UInt8](repeating: 5, count: 64)),
            .leave(link: link),
        ]
        return messages.map { $0.encoded() } + [Pieces.join(messages.map { $0.encoded() }),
                                                 RelayHandshake.hello(ephemeral: Fixtures.relayKey.publicKey),
                                                 FrameCodec.encode(ClientMessage.ping(1).encoded())]
    }
}

/// What the relay sends a client, read as the client's reader thread reads it: frames cut
/// from the stream, each opened by the client's cipher (sealed here by the relay's), decoded
/// as a `RelayMessage` and turned into the event the engine sees.
enum RelayFrameTarget: FuzzTarget {
    static let name = "relay-frames"

    static func run(_ input: [UInt8]) {
        _ = Channels.frames(of: input)
        var (client, relay) = Channels.pair()
        for (i, body) in Pieces(input).enumerated() {
            if let message = RelayMessage.decode(body) {
                precondition(RelayMessage.decode(message.encoded()) == message, "a relay message does not decode to itself")
                _ = RelayClient.event(for: message)
            }
            // The same body through the sealed channel, as the relay pads it.
            let sealed = relay.seal(body, fill: i % 2 == 0 ? .toWireSize : .trailerOnly)
            let opened = try! client.open(sealed)
            precondition(opened == body, "a sealed body does not open to itself")
        }
    }

    static func seeds() -> [[UInt8]] {
        let mailbox = MailboxID(publicKey: Fixtures.alice.publicKey)
        let messages: [RelayMessage] = [
            .challenge([UInt8](repeating: 1, count: RelayProtocol.challengeBytes)),
            .welcome(mailbox: mailbox, relayTime: 1_800_000_000, held: 3),
            .linked(link: 1, code: [UInt8](repeating: 2, count: rendezvousCodeBytes)),
            .peerGone(link: 1),
            .sent(seq: 4, forwarded: true),
            .refused(seq: 5, reason: 1),
            .deliver(Delivery(id: 6, heldAt: 1_800_000_000, link: 1, origin: .link(code: [UInt8](repeating: 2, count: 32)), payload: [1, 2, 3])),
            .deliver(Delivery(id: 7, heldAt: 1_800_000_001, link: nil, origin: .invite(InviteToken(bytes: [UInt8](repeating: 3, count: 16))!), payload: [4])),
            .deliver(Delivery(id: 8, heldAt: 1_800_000_002, link: nil, origin: .own, payload: [])),
            .drained,
            .pong(9),
            .error(2),
        ]
        return messages.map { $0.encoded() } + [Pieces.join(messages.map { $0.encoded() }),
                                                 FrameCodec.encode(RelayMessage.drained.encoded())]
    }
}
