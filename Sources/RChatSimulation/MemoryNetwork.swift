import RChatCore
import RChatCrypto
import RChatNet
import RChatRelay
import RChatRelayClient
import RChatWire

/// The simulation's network: connections between accounts' engines and the relay that carry
/// the real frames (sealed by the real transport cipher) on virtual time. Like TCP, a
/// connection delivers its frames in order after a delay; faults break that on purpose: a
/// frame dropped, duplicated or overtaken by the next fails to open at the other end (its
/// counter is its nonce), which ends the connection as it would end a real one. A cut ends
/// it at both ends with whatever was in flight; a partitioned account reaches nothing.
final class MemoryNetwork: @unchecked Sendable {
    // @unchecked: used on the simulation's one thread only (engines reach it through their dialer).
    struct Faults: Equatable {
        var drop = 0.0
        var duplicate = 0.0
        var reorder = 0.0
        /// One-way delay of a frame, in seconds.
        var delay: ClosedRange<Double> = 0.001...0.02

        static let none = Faults()
        var isClean: Bool { drop == 0 && duplicate == 0 && reorder == 0 }
    }

    let scheduler: Scheduler
    var random: SimulationRandom
    var faults = Faults.none
    /// Accounts that reach nothing: their attempts fail and their connections were cut.
    var partitioned: Set<String> = []
    /// Each owner's process, counted up when it is killed: an attempt made by an earlier one
    /// comes to nothing.
    private var processes: [String: Int] = [:]
    private(set) var relay: SimulatedRelay?
    private var connections: [Int: MemoryConnection] = [:]
    private var nextConnection = 1
    let trace: Trace
    /// What a watcher of the wire learns of each frame as it leaves (`BlindObserver`): whose
    /// connection, which way, its length on the wire (length prefix included), and when.
    var watch: ((_ owner: String, _ toRelay: Bool, _ wireBytes: Int, _ at: Double) -> Void)?

    init(scheduler: Scheduler, seed: UInt64, trace: Trace) {
        self.scheduler = scheduler
        random = SimulationRandom(seed: seed ^ 0x6E65_7477_6F72_6B21)
        self.trace = trace
    }

    func attach(_ relay: SimulatedRelay?) { self.relay = relay }

    var openConnections: [MemoryConnection] { connections.keys.sorted().compactMap { connections[$0] } }

    // MARK: connecting

    /// An attempt from `owner`'s engine; `done` is called on virtual time.
    func dial(from owner: String, host: HostAddress, address: RelayAddress, mailboxKey: SigningKey,
              events: @escaping @Sendable (RelayEvent) -> Void, writable: @escaping @Sendable () -> Void,
              done: @escaping @Sendable (Result<any RelayLink, RelayClientError>) -> Void) {
        let process = processes[owner, default: 0]
        scheduler.after(oneWayDelay()) { [self] in
            // The process that dialled was killed meanwhile: its socket died with it, and
            // nothing reaches the relay.
            guard processes[owner, default: 0] == process else { return }
            guard !partitioned.contains(owner), let relay, relay.address == address, relay.isUp else {
                return done(.failure(.connectFailed("connection refused (simulated)")))
            }
            let id = nextConnection
            nextConnection += 1
            let connection = MemoryConnection(id: id, owner: owner, network: self, relay: relay, openedAt: scheduler.now)
            let link = MemoryRelayLink(connection: connection, address: address, mailboxKey: mailboxKey, events: events, done: done)
            connection.client = link
            connections[id] = connection
            relay.iteration { connection.receiver = relay.accept(connection, from: host) }
            link.start()
            // A relay that never answers: the handshake gives up, as RelayClient's does.
            scheduler.after(5) { [weak link] in link?.handshakeTimedOut() }
        }
    }

    // MARK: carrying frames

    /// Sends `frame` one way on `connection` with the faults in force.
    func carry(_ frame: [UInt8], on connection: MemoryConnection, toRelay: Bool) {
        guard toRelay ? connection.clientOpen : connection.relayOpen else { return }
        watch?(connection.owner, toRelay, frame.count + 4, scheduler.now)
        if random.chance(faults.drop) { trace.note("net drop #\(connection.id)"); return }
        var copies = 1
        if random.chance(faults.duplicate) { copies = 2; trace.note("net duplicate #\(connection.id)") }
        for _ in 0..<copies {
            var arrival = max(scheduler.now + oneWayDelay(), toRelay ? connection.lastToRelay : connection.lastToClient)
            if random.chance(faults.reorder) {
                // Overtakes what is in flight.
                arrival = scheduler.now + faults.delay.lowerBound / 2
                trace.note("net reorder #\(connection.id)")
            } else if toRelay {
                connection.lastToRelay = arrival
            } else {
                connection.lastToClient = arrival
            }
            scheduler.at(arrival) {
                if toRelay {
                    guard connection.relayOpen, connection.relay.isCurrent(connection.incarnation) else { return }
                    connection.relay.iteration { connection.receiver?.received(frame) }
                } else {
                    guard connection.clientOpen else { return }
                    connection.client?.receive(frame)
                }
            }
        }
    }

    private func oneWayDelay() -> Double { random.uniform(faults.delay) }

    // MARK: ending connections

    /// The client closed: the relay learns it after what the client sent before.
    func closedByClient(_ connection: MemoryConnection) {
        guard connection.clientOpen else { return }
        connection.clientOpen = false
        let arrival = max(scheduler.now + oneWayDelay(), connection.lastToRelay)
        scheduler.at(arrival) { [self] in
            guard connection.relayOpen, connection.relay.isCurrent(connection.incarnation) else { return forget(connection) }
            connection.relay.iteration { connection.endAtRelay() }
            forget(connection)
        }
    }

    /// The relay closed (`RelayConnectionPort.close`): the client sees the end after what
    /// the relay sent before it.
    func closedByRelay(_ connection: MemoryConnection) {
        let arrival = max(scheduler.now + oneWayDelay(), connection.lastToClient)
        scheduler.at(arrival) { [self] in
            connection.client?.lost("closed by the relay")
            connection.clientOpen = false
            forget(connection)
        }
    }

    /// Ends the connection now at both ends; what was in flight is lost.
    func cut(_ connection: MemoryConnection, _ why: String) {
        trace.note("net cut #\(connection.id) (\(why))")
        connection.clientOpen = false
        if connection.relayOpen, connection.relay.isCurrent(connection.incarnation) {
            connection.relay.iteration { connection.endAtRelay() }
        }
        connection.relayOpen = false
        connection.receiver = nil
        connection.client?.lost(why)
        forget(connection)
    }

    func cutAll(of owner: String, _ why: String) {
        for connection in openConnections where connection.owner == owner { cut(connection, why) }
    }

    /// `owner`'s process was killed: its connections end, and so do its attempts still on
    /// their way (a killed process's sockets close with it).
    func processKilled(_ owner: String) {
        processes[owner, default: 0] += 1
        cutAll(of: owner, "engine killed")
    }

    /// The relay went away: every connection ends at the client (the relay's side is gone).
    func relayDied() {
        for connection in openConnections {
            connection.relayOpen = false
            connection.receiver = nil
            connection.clientOpen = false
            connection.client?.lost("the relay stopped")
            forget(connection)
        }
    }

    private func forget(_ connection: MemoryConnection) {
        guard !connection.clientOpen && !connection.relayOpen else { return }
        connections[connection.id] = nil
        connection.client = nil
    }

    /// The relay's loop ends an iteration: what each connection queued leaves.
    func flush(_ connection: MemoryConnection) {
        for frame in connection.takeOutbound() { carry(frame, on: connection, toRelay: false) }
    }
}

/// One connection: the relay's port on one side, the engine's link on the other. Each end
/// learns of the other's close only when it arrives.
final class MemoryConnection: RelayConnectionPort {
    let id: Int
    let owner: String
    unowned let network: MemoryNetwork
    let relay: SimulatedRelay
    /// The relay's incarnation it was accepted by: a restarted relay knows nothing of it.
    let incarnation: Int
    /// Held until both ends closed (the link holds the connection too).
    var client: MemoryRelayLink?
    var receiver: (any RelayConnectionReceiver)?
    var clientOpen = true
    var relayOpen = true
    var lastToRelay = 0.0
    var lastToClient = 0.0
    private var outbound: [[UInt8]] = []
    private var outboundCount = 0
    let openedAt: Double

    init(id: Int, owner: String, network: MemoryNetwork, relay: SimulatedRelay, openedAt: Double) {
        self.id = id
        self.owner = owner
        self.network = network
        self.relay = relay
        incarnation = relay.incarnation
        self.openedAt = openedAt
    }

    /// The relay learns the connection ended (once).
    func endAtRelay() {
        guard relayOpen else { return }
        relayOpen = false
        let receiver = self.receiver
        self.receiver = nil
        receiver?.connectionClosed()
    }

    // RelayConnectionPort: the relay's side.
    func send(_ body: [UInt8]) {
        guard relayOpen else { return }
        outbound.append(body)
        outboundCount += body.count
        relay.needsFlush(self)
    }

    func flush() { network.flush(self) }

    /// As a socket's: what is queued goes now, then the relay's side ends (told at once).
    func close() {
        guard relayOpen else { return }
        network.flush(self)
        network.closedByRelay(self)
        endAtRelay()
    }

    func abandon() {
        guard relayOpen else { return }
        _ = takeOutbound()
        close()
    }

    var isClosed: Bool { !relayOpen }
    var outboundBytes: Int { outboundCount }
    var partialFrameSince: Double? { nil }

    func takeOutbound() -> [[UInt8]] {
        let frames = outbound
        outbound.removeAll()
        outboundCount = 0
        return frames
    }
}

/// The engine's end of a memory connection: the client side of the relay protocol (the
/// handshake, then sealed frames) over `MemoryNetwork`, as `RelayClient` is over TCP.
final class MemoryRelayLink: RelayLink, @unchecked Sendable {
    // @unchecked: the simulation runs on one thread; the engine calls these on that thread.
    private enum Phase {
        case awaitingRelayHello(AgreementKey)
        case awaitingChallenge(TransportCipher, transcript: [UInt8])
        case awaitingWelcome(TransportCipher)
        case ready(TransportCipher)
        case closed
    }

    let connection: MemoryConnection
    let address: RelayAddress
    private let mailboxKey: SigningKey
    private let events: @Sendable (RelayEvent) -> Void
    private var done: (@Sendable (Result<any RelayLink, RelayClientError>) -> Void)?
    private var phase: Phase
    private var nextSeq: UInt64 = 1
    private(set) var mailbox: MailboxID

    init(connection: MemoryConnection, address: RelayAddress, mailboxKey: SigningKey,
         events: @escaping @Sendable (RelayEvent) -> Void,
         done: @escaping @Sendable (Result<any RelayLink, RelayClientError>) -> Void) {
        self.connection = connection
        self.address = address
        self.mailboxKey = mailboxKey
        self.events = events
        self.done = done
        mailbox = MailboxID(publicKey: mailboxKey.publicKey)
        phase = .awaitingRelayHello(AgreementKey.generate())
    }

    func start() {
        guard case .awaitingRelayHello(let ephemeral) = phase else { return }
        connection.network.carry(RelayHandshake.hello(ephemeral: ephemeral.publicKey), on: connection, toRelay: true)
    }

    func receive(_ frame: [UInt8]) {
        if frame.count == 2, frame[0] == 0xEE { return fail(.relayError(RelayErrorCode(rawValue: frame[1]))) }
        switch phase {
        case .awaitingRelayHello(let ephemeral):
            do throws(CryptoError) {
                let (cipher, transcript) = try RelayHandshake.clientCipher(ephemeral: ephemeral, relayStatic: address.publicKey,
                                                                            relayHello: frame)
                phase = .awaitingChallenge(cipher, transcript: transcript)
            } catch {
                fail(.handshakeFailed(error.description))
            }
        case .awaitingChallenge(var cipher, let transcript):
            guard case .challenge(let challenge)? = open(frame, &cipher) else { return fail(.protocolViolation("expected a challenge")) }
            let signature = mailboxKey.sign(RelayHandshake.authMessage(transcript: transcript, challenge: challenge))
            let auth = cipher.seal(ClientMessage.auth(mailboxKey: mailboxKey.publicKey, signature: signature).encoded())
            phase = .awaitingWelcome(cipher)
            connection.network.carry(auth, on: connection, toRelay: true)
        case .awaitingWelcome(var cipher):
            let message = open(frame, &cipher)
            guard case .welcome(let proved, _, _)? = message, proved == mailbox else {
                if case .error(let code)? = message { return fail(.relayError(RelayErrorCode(rawValue: code))) }
                return fail(.protocolViolation("expected welcome"))
            }
            phase = .ready(cipher)
            done?(.success(self))
            done = nil
        case .ready(var cipher):
            guard let message = open(frame, &cipher) else { return fail(.protocolViolation("a frame failed to decrypt")) }
            phase = .ready(cipher)
            if case .error(let code) = message { return fail(.relayError(RelayErrorCode(rawValue: code))) }
            guard let event = RelayClient.event(for: message) else { return fail(.protocolViolation("unexpected frame")) }
            events(event)
        case .closed:
            break
        }
    }

    private func open(_ frame: [UInt8], _ cipher: inout TransportCipher) -> RelayMessage? {
        guard let body = try? cipher.open(frame) else { return nil }
        return RelayMessage.decode(body)
    }

    /// The connection ended under it (a cut, the relay closing or stopping).
    func lost(_ why: String) { fail(.connectionLost(why), closeConnection: false) }

    func handshakeTimedOut() {
        if case .ready = phase { return }
        if case .closed = phase { return }
        fail(.timedOut)
    }

    private func fail(_ error: RelayClientError, closeConnection: Bool = true) {
        let wasReady: Bool
        switch phase {
        case .closed: return
        case .ready: wasReady = true
        default: wasReady = false
        }
        phase = .closed
        if closeConnection { connection.network.closedByClient(connection) }
        if wasReady {
            events(.closed(error))
        } else {
            done?(.failure(error))
            done = nil
        }
    }

    // MARK: RelayLink

    private func enqueue(_ message: ClientMessage) throws(RelayClientError) {
        guard case .ready(var cipher) = phase else { throw .closed }
        let frame = cipher.seal(message.encoded())
        phase = .ready(cipher)
        connection.network.carry(frame, on: connection, toRelay: true)
    }

    private func numbered(_ make: (UInt64) -> ClientMessage) throws(RelayClientError) -> UInt64 {
        let seq = nextSeq
        try enqueue(make(seq))
        nextSeq += 1
        return seq
    }

    func present(_ codes: [[UInt8]], flush: Bool) throws(RelayClientError) { try enqueue(.present(codes)) }

    func registerInvites(salts: [[UInt8]], flush: Bool) throws(RelayClientError) -> [InviteToken] {
        try enqueue(.registerInvites(salts: salts))
        return salts.map { InviteToken.derived(mailbox: mailbox, salt: $0) }
    }

    func moveMailbox(from old: SigningKey, flush: Bool) throws(RelayClientError) {
        let signature = old.sign(MailboxMove.statement(from: MailboxID(publicKey: old.publicKey), to: mailbox))
        try enqueue(.moveMailbox(oldKey: old.publicKey, signature: signature))
    }

    func send(on link: LinkID, _ payload: [UInt8], ahead: Bool, flush: Bool) throws(RelayClientError) -> UInt64 {
        try numbered { ahead ? .sendAhead(seq: $0, link: link, payload: payload) : .send(seq: $0, link: link, payload: payload) }
    }

    func sendRequest(to token: InviteToken, _ payload: [UInt8], flush: Bool) throws(RelayClientError) -> UInt64 {
        try numbered { .request(seq: $0, token: token, payload: payload) }
    }

    func acknowledge(_ ids: [HeldItemID], flush: Bool) throws(RelayClientError) {
        var rest = ids[...]
        while !rest.isEmpty {
            let chunk = Array(rest.prefix(RelayProtocol.maximumAcknowledgementsPerFrame))
            rest = rest.dropFirst(chunk.count)
            try enqueue(.acknowledge(chunk))
        }
    }

    func ping(_ value: UInt64) throws(RelayClientError) { try enqueue(.ping(value)) }
    func leave(_ link: LinkID) throws(RelayClientError) { try enqueue(.leave(link: link)) }
    func flush() throws(RelayClientError) { if case .closed = phase { throw .closed } }
    func hasRoom() -> Bool { if case .ready = phase { return true } else { return false } }

    func close() {
        if case .closed = phase { return }
        let wasReady: Bool
        if case .ready = phase { wasReady = true } else { wasReady = false }
        phase = .closed
        connection.network.closedByClient(connection)
        if wasReady { events(.closed(nil)) }
    }
}
