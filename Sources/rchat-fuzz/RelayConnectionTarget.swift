import Glibc
import RChatCore
import RChatCrypto
import RChatNet
@testable import RChatRelay
import RChatWire

/// The relay's logic in this process, on a loop of its own time, with no sockets.
/// `@unchecked Sendable`: the relay and its clock are used on the one thread that runs the target.
final class FuzzLoop: RelayLoop, @unchecked Sendable {
    private(set) var now = 0.0
    private var timers: [(at: Double, every: Double?, action: () -> Void)] = []
    private var hooks: [() -> Void] = []

    @discardableResult
    func schedule(after seconds: Double, repeating: Bool, _ action: @escaping () -> Void) -> Int {
        timers.append((now + seconds, repeating ? seconds : nil, action))
        return timers.count
    }

    func addBeforeFlush(_ hook: @escaping () -> Void) { hooks.append(hook) }

    /// The end of an iteration: what the relay commits before anything leaves.
    func finishIteration() { for hook in hooks { hook() } }

    /// Time passes: every timer due runs, each in its own iteration.
    func advance(by seconds: Double) {
        let end = now + seconds
        while let next = timers.indices.filter({ timers[$0].at <= end }).min(by: { timers[$0].at < timers[$1].at }) {
            let timer = timers.remove(at: next)
            now = max(now, timer.at)
            if let every = timer.every { timers.append((now + every, every, timer.action)) }
            timer.action()
            finishIteration()
        }
        now = end
    }
}

struct FuzzClock: Clock {
    let loop: FuzzLoop
    func now() -> Int64 { 1_800_000_000 + Int64(loop.now) }
    func nowMilliseconds() -> Int64 { now() * 1000 }
}

/// The relay's side of one connection: what it queued, and whether it closed it.
final class FuzzConnection: RelayConnectionPort {
    var queued: [[UInt8]] = []
    private(set) var isClosed = false
    let openedAt: Double
    init(openedAt: Double) { self.openedAt = openedAt }

    func send(_ body: [UInt8]) { if !isClosed { queued.append(body) } }
    func flush() {}
    func close() { isClosed = true }
    func abandon() { queued.removeAll(); isClosed = true }
    var outboundBytes: Int { queued.reduce(0) { $0 + $1.count } }
    var partialFrameSince: Double? { nil }
}

/// A client as the fuzzer drives it: it does the handshake and authentication itself (the
/// fuzzer would never forge the signatures), then sends what the input says, sealed, and
/// reads every frame the relay sends it.
final class FuzzClient {
    let key: SigningKey
    let connection: FuzzConnection
    var receiver: (any RelayConnectionReceiver)?
    let ephemeral = AgreementKey.generate()
    var cipher: TransportCipher?
    var transcript: [UInt8] = []
    var sequence: UInt64 = 0
    /// Sequence numbers sent and not yet answered (`sent` or `refused`).
    var unanswered: Set<UInt64> = []
    var delivered: [HeldItemID] = []
    var links: [LinkID] = []
    var authenticated = false
    var closedByRelay = false

    init(key: SigningKey, connection: FuzzConnection) {
        self.key = key
        self.connection = connection
    }

    /// Reads what the relay queued: every frame must be one the client can read.
    func read(auto authenticate: Bool) {
        let frames = connection.queued
        connection.queued.removeAll()
        for frame in frames {
            guard var cipher else {
                if let message = RelayMessage.decode(frame) {
                    guard case .error = message else { preconditionFailure("plaintext relay frame that is not an error: \(message)") }
                    continue
                }
                let (agreed, transcript) = try! RelayHandshake.clientCipher(ephemeral: ephemeral, relayStatic: Fixtures.relayKey.publicKey,
                                                                             relayHello: frame)
                self.cipher = agreed
                self.transcript = transcript
                continue
            }
            precondition(Padding.wireSizes.contains(frame.count + 4) || frame.count <= 300, "a relay frame of \(frame.count) bytes")
            let body = try! cipher.open(frame)
            self.cipher = cipher
            guard let message = RelayMessage.decode(body) else { preconditionFailure("the relay sent a frame the client cannot decode") }
            switch message {
            case .challenge(let challenge):
                precondition(!authenticated, "a challenge after authentication")
                if authenticate {
                    let signature = key.sign(RelayHandshake.authMessage(transcript: transcript, challenge: challenge))
                    send(ClientMessage.auth(mailboxKey: key.publicKey, signature: signature).encoded())
                }
            case .welcome(let mailbox, _, _):
                precondition(mailbox == MailboxID(publicKey: key.publicKey), "welcomed as another mailbox")
                authenticated = true
            case .sent(let seq, _), .refused(let seq, _):
                precondition(unanswered.remove(seq) != nil, "seq \(seq) answered twice, or never sent")
            case .deliver(let delivery):
                precondition(Padding.wireSizes.contains(frame.count + 4), "a delivery not padded to a wire size (\(frame.count + 4) bytes)")
                delivered.append(delivery.id)
            case .linked(let link, _):
                links.append(link)
            case .peerGone, .drained, .pong, .error:
                break
            }
        }
    }

    /// Seals `body` as a client does (padded to a wire size) and hands it to the relay.
    func send(_ body: [UInt8]) {
        guard let receiver, !connection.isClosed, var cipher else { return }
        if let message = ClientMessage.decode(body) {
            switch message {
            case .send(let seq, _, _), .sendAhead(let seq, _, _), .request(let seq, _, _): unanswered.insert(seq)
            default: break
            }
        }
        let frame = cipher.seal(body)
        self.cipher = cipher
        receiver.received(frame)
    }

    func nextSequence() -> UInt64 {
        sequence += 1
        return sequence
    }
}

/// Whole connections fed to the relay's logic: clients connect, authenticate, present codes,
/// send on links, acknowledge, send garbage and leave, as the input's operations say. Every
/// frame the relay sends must be one a client can open and decode; a sequence number is
/// answered once; what the relay counts as held matches its queues; and once every
/// connection closed, no session is left; a delivery is padded to a wire size.
enum RelayConnectionTarget: FuzzTarget {
    static let name = "relay-connection"
    static let keys = [Fixtures.alice, Fixtures.bob, Fixtures.signingKey(6)]
    /// RCHAT_FUZZ_TRACE=1: the relay's log on stderr (to see what an input does).
    static let trace = getenv("RCHAT_FUZZ_TRACE") != nil

    static func run(_ input: [UInt8]) {
        let loop = FuzzLoop()
        var configuration = RelayConfiguration(keyFile: "/nonexistent/rchat-fuzz-relay.key")
        configuration.handshakeTimeout = 5
        configuration.idleTimeout = 20
        configuration.holdHours = 1
        let relay = try! Relay(inMemory: configuration, address: Fixtures.relay, staticKey: Fixtures.relayKey, loop: loop,
                               clock: FuzzClock(loop: loop), log: trace ? .standardError(prefix: "relay: ") : .discarding)
        var clients: [FuzzClient?] = [nil, nil, nil]

        func connect(_ slot: Int, authenticate: Bool) {
            if let old = clients[slot] { close(old) }
            let connection = FuzzConnection(openedAt: loop.now)
            let client = FuzzClient(key: keys[slot], connection: connection)
            client.receiver = relay.accept(connection, from: HostAddress(high: 0, low: UInt64(slot + 1)))
            clients[slot] = client
            client.receiver?.received(RelayHandshake.hello(ephemeral: client.ephemeral.publicKey))
            settle(authenticate: authenticate)
        }
        func close(_ client: FuzzClient) {
            client.connection.close()
            settle(authenticate: false)
        }
        /// The iteration ends: the relay commits, the clients read, and a connection the relay
        /// (or the client) closed is reported closed to it, once.
        func settle(authenticate: Bool) {
            for _ in 0..<4 {
                loop.finishIteration()
                for client in clients.compactMap({ $0 }) {
                    client.read(auto: authenticate)
                    if client.connection.isClosed, let receiver = client.receiver {
                        client.receiver = nil
                        receiver.connectionClosed()
                    }
                }
            }
        }

        var reader = Pieces(input)
        while let piece = reader.next() {
            guard let op = piece.first else { continue }
            let slot = Int(op >> 4) % clients.count
            let rest = Array(piece.dropFirst())
            guard let client = clients[slot], client.receiver != nil else {
                connect(slot, authenticate: op & 0x08 == 0)
                continue
            }
            switch op & 0x07 {
            case 0: connect(slot, authenticate: op & 0x08 == 0)
            case 1: client.send(rest)                                  // any body, sealed
            case 2: client.receiver?.received(rest)                   // an unsealed frame
            case 3: close(client)
            case 4: loop.advance(by: Double(rest.first ?? 1)); settle(authenticate: true)
            case 5:
                if !client.delivered.isEmpty {
                    client.send(ClientMessage.acknowledge(Array(client.delivered.prefix(RelayProtocol.maximumAcknowledgementsPerFrame))).encoded())
                    client.delivered.removeFirst(min(client.delivered.count, RelayProtocol.maximumAcknowledgementsPerFrame))
                }
            case 6: client.send(ClientMessage.present([[UInt8](repeating: rest.first ?? 0, count: rendezvousCodeBytes)]).encoded())
            default:
                let link = client.links.last ?? LinkID(rest.first ?? 0)
                client.send(ClientMessage.send(seq: client.nextSequence(), link: link,
                                               payload: Array(rest.prefix(RelayProtocol.maximumPayloadBytes))).encoded())
            }
            settle(authenticate: true)
            checkHeld(relay)
        }
        for client in clients.compactMap({ $0 }) { close(client) }
        checkHeld(relay)
        precondition(relay.sessions.isEmpty && relay.sessionsByMailbox.isEmpty, "sessions left after every connection closed")
    }

    /// What the relay counts as held is what its queues hold.
    static func checkHeld(_ relay: Relay) {
        let items = relay.queues.values.reduce(0) { $0 + $1.liveCount }
        let bytes = relay.queues.values.reduce(0) { $0 + $1.liveBytes }
        precondition(relay.totalHeldItems == items && relay.totalHeldBytes == bytes,
                     "held \(relay.totalHeldItems) items / \(relay.totalHeldBytes) bytes, queues \(items) / \(bytes)")
    }

    static func seeds() -> [[UInt8]] {
        func op(_ slot: UInt8, _ kind: UInt8, _ rest: [UInt8] = []) -> [UInt8] { [slot << 4 | kind] + rest }
        let code: [UInt8] = [42]
        let linked: [[UInt8]] = [
            op(0, 0), op(1, 0),                      // both connect and authenticate
            op(0, 6, code), op(1, 6, code),          // the same code: a link
            op(0, 7, Array("hello".utf8)),           // Alice sends on it
            op(1, 5),                                // Bob acknowledges
            op(1, 3),                                // Bob leaves; Alice sends again: held
            op(0, 7, Array("held".utf8)),
            op(1, 0), op(1, 5),                      // Bob back: handed over and acknowledged
            op(2, 0), op(2, 1, ClientMessage.ping(7).encoded()),
            op(2, 1, ClientMessage.registerInvites(salts: [[UInt8](repeating: 1, count: 16)]).encoded()),
            op(2, 2, [0, 1, 2]),                     // garbage before the cipher is used
            op(0, 4, [30]),                          // time passes: timeouts, expiry
        ]
        return [Pieces.join(linked), Pieces.join([op(0, 8), op(0, 1, [1, 2, 3])]), Pieces.join([op(0, 0), op(0, 2, RelayHandshake.hello(ephemeral: Fixtures.relayKey.publicKey))])]
    }
}
