import Foundation
import RChatCore
import RChatCrypto
import RChatNet
import RChatWire
import CEpoll

/// The relay (docs/PROTOCOL.md, "Relay protocol") as a library: pairs, forwards, holds and hands over,
/// on one epoll loop thread. `rchat-relay` is argument parsing around this.
///
/// `@unchecked Sendable`: other threads hold a relay only to call `stop()` (the loop's
/// thread-safe stop); all its state is confined to the thread its loop runs on (`thread`
/// checks that in debug builds), where a lock would only add a cost to every frame.
public final class Relay: @unchecked Sendable {
    public let configuration: RelayConfiguration
    public let address: RelayAddress
    let clock: Clock
    public let log: Logger
    /// Where the logic runs: the epoll loop, or a virtual one.
    let loop: any RelayLoop
    /// The socket side when serving on the network (nil in memory).
    private let network: (loop: EventLoop, listener: TCPListener)?
    /// The thread `run()` serves on: the only one that touches the state below meanwhile.
    let thread = ThreadOwner("relay")
    let staticKey: AgreementKey
    let persistence: HeldPersistence?
    /// Cluster mode (`--cluster`): held frames live in NATS JetStream, not here.
    let cluster: ClusterNode?

    var sessions: [Int: Session] = [:]
    private var nextSessionNumber = 1
    /// Authenticated sessions per mailbox; the first is the one handed the mailbox's items.
    var sessionsByMailbox: [MailboxID: [Session]] = [:]
    var queues: [MailboxID: MailboxQueue] = [:]
    let origins = Origins()
    var nextItemID: HeldItemID = 1
    var totalHeldBytes = 0
    /// What each sending host and mailbox holds here (one process only).
    var shares = SenderShares()
    var totalHeldItems = 0
    var nextLinkID: LinkID = 1
    var pairing: Pairing
    /// Open connections per host, and the hosts whose refusal was logged (until one of
    /// their connections closes).
    private var connectionsByHost: [HostAddress: Int] = [:]
    private var hostsRefusedLogged: Set<HostAddress> = []
    /// Links made for a mailbox, and message requests sent to one: bounded per mailbox.
    var linkBudgets: [MailboxID: TokenBucket] = [:]
    var requestBudgets: [MailboxID: TokenBucket] = [:]
    var invites = InviteRegistry()
    var totals = FrameCounters()
    private var refusedInBurst = 0
    /// Connections closed since free memory was last handed back to the system (weighed by
    /// what they held).
    private var closedSinceTrim = 0
    private var refusalBurstLogged = false

    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Serves on `configuration.host:port` (call `run()`), with the key in `configuration.keyFile`.
    public convenience init(configuration: RelayConfiguration, clock: Clock = SystemClock(), log: Logger = .standardError(prefix: "rchat-relay: ")) throws(StartError) {
        NetSetup.ignoreBrokenPipes()
        NetSetup.raiseDescriptorLimit()
        let staticKey: AgreementKey
        do { staticKey = try RelayKeyFile.loadOrCreate(path: configuration.keyFile) } catch { throw StartError(description: error.description) }
        let loop: EventLoop, listener: TCPListener
        do {
            loop = try EventLoop()
            listener = try TCPListener(host: configuration.host, port: configuration.port, loop: loop)
        } catch {
            throw StartError(description: "cannot listen on \(configuration.host):\(configuration.port): \(error.description)")
        }
        let advertisedHost = configuration.host == "0.0.0.0" || configuration.host == "::" ? Self.guessHost() : configuration.host
        let address = RelayAddress(host: advertisedHost, port: listener.port, publicKey: staticKey.publicKey)
        try self.init(configuration: configuration, clock: clock, log: log, staticKey: staticKey, loop: loop,
                      network: (loop, listener), address: address)
        listener.onAccept = { [unowned self] fd, host in accepted(fd, from: host) }
        listener.onDescriptorsExhausted = { [unowned self] in refusedConnection() }
    }

    /// The same logic without sockets, on `loop` (the simulation's virtual loop and in-memory
    /// network): connections come in through `accept(_:from:)`.
    public convenience init(inMemory configuration: RelayConfiguration, address: RelayAddress, staticKey: AgreementKey,
                            loop: any RelayLoop, clock: Clock, log: Logger) throws(StartError) {
        try self.init(configuration: configuration, clock: clock, log: log, staticKey: staticKey, loop: loop,
                      network: nil, address: address)
    }

    private init(configuration: RelayConfiguration, clock: Clock, log: Logger, staticKey: AgreementKey, loop: any RelayLoop,
                 network: (loop: EventLoop, listener: TCPListener)?, address: RelayAddress) throws(StartError) {
        self.configuration = configuration
        self.clock = clock
        self.log = log
        self.staticKey = staticKey
        self.loop = loop
        self.network = network
        self.address = address
        pairing = Pairing(timeout: configuration.pairingTimeout, maxPerSession: configuration.maxPendingCodesPerConnection,
                          maxPerMailbox: configuration.maxPendingCodesPerMailbox)
        if let path = configuration.persistPath {
            do { persistence = try HeldPersistence(path: path, relayKey: staticKey) } catch {
                throw StartError(description: "cannot open --persist \(path): \(error)")
            }
        } else {
            persistence = nil
        }
        if configuration.clusterServers.isEmpty {
            cluster = nil
        } else {
            guard let network else { throw StartError(description: "a cluster node serves on the network only") }
            cluster = try Self.startCluster(configuration, relayKey: staticKey, loop: network.loop)
        }
        if clock is SystemClock, (clock as! SystemClock).isFake { log.note("RCHAT_FAKE_NOW is set: relay time is fixed at \(clock.now()) (tests only)") }
        try loadPersisted()
        loop.addBeforeFlush { [unowned self] in commitPersistence() }
        if let cluster { attachCluster(cluster) }
        let sweep = max(0.05, min(1.0, min(configuration.handshakeTimeout, configuration.frameTimeout, configuration.idleTimeout) / 4))
        loop.schedule(after: sweep, repeating: true) { [unowned self] in sweepConnections() }
        loop.schedule(after: 60, repeating: true) { [unowned self] in expireHeld() }
        // A quarter of the expiry late at most (an hour for the default's 30 days).
        let inviteSweep = max(0.25, min(3600, Double(configuration.inviteExpirySeconds) / 4))
        loop.schedule(after: inviteSweep, repeating: true) { [unowned self] in sweepInvites() }
    }

    private static func guessHost() -> String { ProcessInfo.processInfo.hostName }

    /// The relay stopped because what it holds could not be made durable: nothing of the
    /// iteration whose commit failed was acknowledged or forwarded.
    public struct PersistenceFailure: Error, CustomStringConvertible {
        public let cause: any Error
        public var description: String { "persistence failed: \(cause); stopped without acknowledging" }
    }
    /// Set when a commit failed: every connection was closed without its queued output, and
    /// the relay takes no more (`run` throws it; the executable exits 1).
    public private(set) var persistenceFailure: PersistenceFailure?

    /// Serves until `stop()` or SIGTERM/SIGINT (when `stopOnSignals()` was called), or until
    /// what it holds cannot be made durable: that is thrown.
    public func run() throws(PersistenceFailure) {
        guard let network else { return }
        thread.claim()
        defer { thread.release() }
        network.loop.run()
        if let failure = persistenceFailure {
            network.listener.close()
            persistence?.close()
            throw failure
        }
        shutDown()
    }

    /// Thread-safe.
    public func stop() { network?.loop.stop() }

    /// Blocks SIGTERM and SIGINT in this thread and every thread started after it (a cluster
    /// node's NATS client starts threads while the relay is made), so that they wait for
    /// `stopOnSignals()`. Call first thing.
    public static func blockStopSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Routes SIGTERM and SIGINT into the loop as a clean stop. Call before any thread starts
    /// (or after `blockStopSignals()`).
    public func stopOnSignals() {
        guard let network else { return }
        let fd = rchat_stop_signalfd()
        guard fd >= 0 else { return }
        let source = SignalSource(fd: fd) { [unowned self] signal in
            log.note("signal \(signal): stopping")
            network.loop.stop()
        }
        try? network.loop.register(fd, events: Readiness.readable, source: source)
        signalSource = source
    }
    private var signalSource: SignalSource?

    private func shutDown() {
        for session in Array(sessions.values) { session.connection.close() }
        network?.loop.finishIteration()
        network?.listener.close()
        commitPersistence()
        persistence?.close()
        cluster?.link.close()
        if let cluster {
            log.note("stopped; held frames stay in the cluster's JetStream (node \(cluster.link.node)); totals \(totals.summary)")
        } else {
            log.note("stopped; holding \(totalHeldItems) items (\(totalHeldBytes) bytes) for \(queues.count) mailboxes; totals \(totals.summary)")
        }
    }

    // MARK: persistence

    private func loadPersisted() throws(StartError) {
        guard let persistence else { return }
        do {
            let loaded = try persistence.load(expiredAtOrBefore: clock.now() - configuration.holdSeconds)
            for item in loaded.items {
                let origin = origins.retain(item.origin)
                // Held bytes per sender are counted again from what each row names.
                let sender = item.sender.map { shares.add(item.payload.count, from: $0) } ?? 0
                queue(for: item.mailbox).append(id: item.id, heldAt: item.heldAt, origin: origin, payload: item.payload,
                                                request: item.origin.isRequest, cover: item.origin == .own, sender: sender)
                totalHeldBytes += item.payload.count
                totalHeldItems += 1
                nextItemID = max(nextItemID, item.id + 1)
            }
            let now = clock.now()
            for invite in loaded.invites {
                // Not counted for a host (not stored); a row without a time is given the load's.
                _ = invites.register(invite.token, for: invite.mailbox, from: nil, now: invite.refreshed == 0 ? now : invite.refreshed,
                                     limits: configuration)
            }
            sweepInvites()
            log.note("loaded \(loaded.items.count) held items and \(loaded.invites.count) invites from \(configuration.persistPath!); dropped \(loaded.expired) expired" + (loaded.unreadable > 0 ? ", \(loaded.unreadable) unreadable" : ""))
        } catch {
            throw StartError(description: "cannot load --persist \(configuration.persistPath!): \(error)")
        }
    }

    func commitPersistence() {
        guard persistenceFailure == nil, let persistence, persistence.hasChanges else { return }
        do {
            try persistence.commit()
        } catch {
            // Acknowledgements of this iteration must not leave: this runs before the flush,
            // and every connection is closed without what it queued.
            persistenceFailure = PersistenceFailure(cause: error)
            for session in Array(sessions.values) { session.connection.abandon() }
            stop()
        }
    }

    // MARK: connections

    private func accepted(_ fd: Int32, from host: HostAddress) {
        thread.check()
        guard persistenceFailure == nil, sessions.count < configuration.maxConnections else {
            refuse(fd)
            refusedConnection()
            return
        }
        guard connectionsByHost[host, default: 0] < configuration.maxConnectionsPerAddress else {
            refuse(fd)
            if hostsRefusedLogged.insert(host).inserted {
                log.warning("\(host) has \(configuration.maxConnectionsPerAddress) connections, its limit: refusing more from it")
            }
            return
        }
        guard let network else { return }
        let connection: StreamConnection
        do { connection = try StreamConnection(fd: fd, loop: network.loop, maximumFrameBytes: RelayProtocol.maximumFrameBytes) } catch {
            Glibc.close(fd)
            return
        }
        connection.delegate = admit(connection, from: host)
    }

    /// A connection not made of a socket (the simulation's): the relay's side of it, or nil
    /// when a limit refuses it (it was sent a `busy` error and closed).
    public func accept(_ connection: any RelayConnectionPort, from host: HostAddress) -> (any RelayConnectionReceiver)? {
        thread.check()
        guard persistenceFailure == nil, sessions.count < configuration.maxConnections,
              connectionsByHost[host, default: 0] < configuration.maxConnectionsPerAddress else {
            connection.send(RelayMessage.error(RelayErrorCode.busy.rawValue).encoded())
            connection.close()
            refusedConnection()
            return nil
        }
        return admit(connection, from: host)
    }

    private func admit(_ connection: any RelayConnectionPort, from host: HostAddress) -> Session {
        let session = Session(number: nextSessionNumber, connection: connection, host: host, relay: self)
        nextSessionNumber += 1
        sessions[session.number] = session
        connectionsByHost[host, default: 0] += 1
        return session
    }

    /// One plaintext `busy` error frame, then close: no handshake work for a refused client.
    private func refuse(_ fd: Int32) {
        let busy = FrameCodec.encode(RelayMessage.error(RelayErrorCode.busy.rawValue).encoded())
        _ = busy.withUnsafeBytes { rchat_send(fd, $0.baseAddress!, $0.count) }
        Glibc.close(fd)
    }

    /// Logged once per burst: the first refusal at once, the count when the burst ends.
    private func refusedConnection() {
        refusedInBurst += 1
        if !refusalBurstLogged {
            refusalBurstLogged = true
            log.warning("connection limit \(configuration.maxConnections) reached: refusing new connections")
        }
    }

    func fail(_ session: Session, _ code: RelayErrorCode, because reason: String) {
        guard session.isOpen else { return }
        log.warning("\(session.name): \(reason); closed with error \(code.rawValue)")
        if session.channel != nil {
            session.send(.error(code.rawValue), kind: .error)
        } else {
            session.counters.count(.error)
            session.connection.send(RelayMessage.error(code.rawValue).encoded())
        }
        session.connection.close()
    }

    /// `session` gives up its end of `link` (it closed, or sent `leave`): the peer's end
    /// stays, marked gone, so what it sends on it is held for this mailbox.
    func leave(_ link: LinkID, by session: Session) {
        guard let end = session.links.removeValue(forKey: link) else { return }
        session.linkForOrigin[end.incomingOrigin] = nil   // what it receives now is held, not live
        if let peer = end.peer.openSession {
            peer.links[link]?.peer = .gone
            peer.send(.peerGone(link: link), kind: .peerGone)
        } else if case .elsewhere(let node, let other) = end.peer {
            cluster?.peerLeft(code: end.code, node: node, session: other, from: session)
        }
        origins.release(end.outgoingOrigin)
        origins.release(end.incomingOrigin)
    }

    func closed(_ session: Session) {
        thread.check()
        // A connection with many links or codes counts as many: their memory goes too.
        closedSinceTrim += 1 + (session.links.count + session.pendingCodes.count) / 64
        sessions[session.number] = nil
        let left = connectionsByHost[session.host, default: 1] - 1
        connectionsByHost[session.host] = left > 0 ? left : nil
        hostsRefusedLogged.remove(session.host)
        pairing.forget(session)
        for id in Array(session.links.keys) { leave(id, by: session) }
        if let mailbox = session.mailbox, var list = sessionsByMailbox[mailbox] {
            let wasTarget = list.first === session
            list.removeAll { $0 === session }
            sessionsByMailbox[mailbox] = list.isEmpty ? nil : list
            if wasTarget, cluster != nil {
                closeHandover(of: session)
                if let next = list.first { openHandover(for: next, mailbox: mailbox, welcomeOwed: false) }
            }
            if wasTarget, let queue = queues[mailbox] {
                queue.restartHandover()
                if list.isEmpty {
                    if queue.isEmpty { queues[mailbox] = nil }
                } else {
                    list[0].drainedNoticeDue = true
                    pump(queue)
                }
            }
        }
        totals.add(session.counters)
        if session.mailbox != nil || session.counters.received.contains(where: { $0 > 0 }) {
            log.note("\(session.name) closed; \(session.counters.summary)")
        }
    }

    private func sweepConnections() {
        let now = loop.now
        for session in Array(sessions.values) where session.isOpen {
            if !session.isReady, now - session.connection.openedAt > configuration.handshakeTimeout {
                fail(session, .timeout, because: "no authentication within \(configuration.handshakeTimeout) s")
            } else if let since = session.connection.partialFrameSince, now - since > configuration.frameTimeout {
                fail(session, .timeout, because: "a frame unfinished for \(configuration.frameTimeout) s")
            } else if session.isReady, session.pendingCodes.isEmpty, session.links.isEmpty,
                      now - session.lastFrameAt > configuration.idleTimeout {
                fail(session, .timeout, because: "idle for \(configuration.idleTimeout) s (no code waiting, no link, no frame)")
            }
        }
        pairing.expire(now: now)
        if closedSinceTrim >= 64 {
            // After many connections went (an attack, or a crowd leaving), RSS falls again.
            closedSinceTrim = 0
            rchat_release_free_memory()
        }
        if refusalBurstLogged, sessions.count < configuration.maxConnections {
            log.warning("connection limit burst over: refused \(refusedInBurst) connections")
            refusalBurstLogged = false
            refusedInBurst = 0
        }
    }

    func expireHeld() {
        // A full budget is the same as none: forgotten, so they do not pile up.
        linkBudgets = linkBudgets.filter { !$0.value.isFull(at: loop.now) }
        requestBudgets = requestBudgets.filter { !$0.value.isFull(at: loop.now) }
        let cutoff = clock.now() - configuration.holdSeconds
        var removed = 0
        for (mailbox, queue) in queues {
            removed += queue.expire(heldAtOrBefore: cutoff) { record in forget(record) }
            if queue.isEmpty, sessionsByMailbox[mailbox] == nil { queues[mailbox] = nil }
        }
        do { try persistence?.expire(heldAtOrBefore: cutoff) } catch { log.error("persistence expiry failed: \(error)") }
        if removed > 0 { log.note("expiry sweep: dropped \(removed) held items older than \(configuration.holdHours) h") }
    }

    /// A record left its queue (acknowledged, expired): what it counted against is freed.
    func forget(_ record: MailboxQueue.Record) {
        origins.release(record.origin)
        shares.remove(record.length, number: record.sender)
        totalHeldBytes -= record.length
        totalHeldItems -= 1
    }

    func queue(for mailbox: MailboxID) -> MailboxQueue {
        if let q = queues[mailbox] { return q }
        let q = MailboxQueue(mailbox: mailbox)
        queues[mailbox] = q
        return q
    }
}

/// The signalfd as an event source.
final class SignalSource: EventSource {
    let fd: Int32
    let action: (Int32) -> Void
    init(fd: Int32, action: @escaping (Int32) -> Void) {
        self.fd = fd
        self.action = action
    }
    func handleEvents(_ events: UInt32) {
        let signal = rchat_read_signalfd(fd)
        if signal > 0 { action(signal) }
    }
}
