import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
import RChatStore

/// The store-and-sync engine (docs/ARCHITECTURE.md): it owns the account's relay connections,
/// each conversation's link and session, the outbox and the receipts, and applies every
/// status change through the store's compare-and-raise.
///
/// One engine thread does all the work; relay reader threads, connection attempts and
/// local wake-ups only post to its inbox. Deliveries that arrive together are stored in one
/// transaction and acknowledged to the relay only after it commits.
///
/// `@unchecked Sendable`: other threads hold the engine only to call `stop()` and `wake()`,
/// which post to its inbox (a lock of its own); every other member is the engine thread's
/// alone (`thread` checks that in debug builds), and a lock over them would be taken by
/// every delivery.
public final class Engine: @unchecked Sendable {
    let account: AccountService
    var identity: AccountIdentity
    let clock: Clock
    /// Time, relays and durability: the machine's, or the simulation's.
    let environment: EngineEnvironment
    let monotonic: any MonotonicClock
    /// `log("…")` writes a note; `log.warning(…)` and the other levels say more.
    let log: Logger
    var settings: EngineSettings
    let inbox = EngineInbox()
    /// The thread `run` or `runCheck` runs on: the only one that touches the state below.
    let thread = ThreadOwner("engine")

    // The components (`EngineComponents.swift`, docs/ARCHITECTURE.md): each owns its state
    // and its next deadline; `turn` dispatches to them and `nextTimer` takes the earliest.
    let connections = Connections()
    let channels = Channels()
    let commits: CommitPipeline
    let receipts = Receipts()
    var storeWatch: StoreWatch
    let outbox: Outbox
    let transfers = Transfers()
    var steady = SteadyTrafficClock()
    var expiry = ExpiryWatch()

    /// Envelopes that could not be authenticated in this run.
    var forgedFrames = 0
    /// What this run may do: everything, or what `rchat check` may (`EnginePolicy`).
    var policy = EnginePolicy.full
    /// The run stopped on damage (`.damaged`): nothing more is written, sessions included.
    var stoppedByDamage = false
    /// Seconds between pings on each relay connection (tests shorten it: `Connections`).
    var keepaliveSeconds: Double {
        get { connections.keepaliveSeconds }
        set { connections.keepaliveSeconds = newValue }
    }
    /// Seconds a relay may take none of the bytes queued for it (`Connections`).
    var relayStallSeconds: Double {
        get { connections.stallSeconds }
        set { connections.stallSeconds = newValue }
    }
    /// Called on the engine thread for every change a view should show.
    public var onEvent: (@Sendable (ChatEvent) -> Void)?
    /// Called on the engine thread at the end of every turn, with the engine's monotonic
    /// time in seconds; `onTurnEndDeadline` says when the one who listens next needs a turn
    /// (nil, or infinity: not before something else happens).
    public var onTurnEnd: (@Sendable (Double) -> Void)?
    public var onTurnEndDeadline: (@Sendable () -> Double)?

    public convenience init(account: AccountService, environment: EngineEnvironment = .system,
                            log: @escaping @Sendable (String) -> Void) throws(EngineError) {
        try self.init(account: account, environment: environment, log: Logger(sink: log))
    }

    public init(account: AccountService, environment: EngineEnvironment = .system, log: Logger) throws(EngineError) {
        self.account = account
        self.clock = account.clock
        self.environment = environment
        monotonic = environment.monotonic
        let started = environment.monotonic.seconds()
        outbox = Outbox(startedAt: started)
        storeWatch = StoreWatch(lastLook: started)
        commits = CommitPipeline { [inbox, environment, account] in
            environment.durability(account.store) { inbox.post(.durable($0)) }
        }
        self.log = log
        identity = try account.identity()
        settings = try AccountService.wrap { try EngineSettings(store: account.store) }
        // Before anything of this run is written: every page of the file is sound, and
        // every saved session opens. Damage is reported and left as it is.
        try AccountService.wrap { try account.store.checkWholeFile() }
        for contact in try AccountService.wrap({ try account.store.contacts(includingDeleted: true, includingMembers: true) }) {
            _ = try account.savedState(of: contact, in: account.store)
        }
    }

    var store: Store { account.store }
    /// Wall time, for what is stored and shown.
    var now: Int64 { clock.now() }
    /// Monotonic time, for timers.
    var ticks: Double { monotonic.seconds() }

    // MARK: running

    /// Runs until `seconds` have passed (nil: until `stop()`).
    public func run(seconds: Double?) throws(EngineError) {
        let end = seconds.map { ticks + $0 }
        let inbox = self.inbox
        thread.claim()
        defer { thread.release() }
        if environment.listensForWakeUps {
            do {
                storeWatch.wakeListener = try WakeListener(home: account.locations.home) { inbox.post(.wake(byCommand: true)) }
            } catch {
                log("the local wake-up is off (\(error)); new messages are found within \(Int(Self.storeLookInterval)) s")
            }
        }
        defer {
            storeWatch.wakeListener?.stop()
            storeWatch.wakeListener = nil
            shutDown()
        }
        try begin()
        while end.map({ ticks < $0 }) ?? true {
            // Nothing due and no end: sleeps until something is posted (a wait of an hour,
            // again and again, stands for forever).
            let deadline = min(end ?? .infinity, nextTimer(), ticks + 3600)
            guard try turn(inbox.take(until: Date(timeIntervalSinceNow: max(0, deadline - ticks)))) else { break }
        }
    }

    /// The start of a run: what an earlier run left unsynced is synced, conversations are
    /// loaded and connections started. The calling thread is the engine's from now on (a
    /// caller driving `step()` itself, like the simulation, calls it on that thread).
    public func begin() throws(EngineError) {
        thread.claim()
        try whileRunning { () throws(EngineError) in
            // What an earlier run committed without waiting for the disk is made durable before
            // a receipt read from the store relies on it (on the sync thread: the connection and
            // the first batch need not wait for it).
            if policy.groupsCommits { commits.startupSync = commits.walSync.request() }
            storeWatch.versionSeen = try AccountService.wrap { try store.otherWritersVersion() }
            try reloadConversations(starting: true)
            publishKeyringIfNeeded()
            connectWhereNeeded()
            try AccountService.wrap { try expiry.refresh(store) }
        }
    }

    /// One turn of the engine, the same for every policy: `items` (in arrival order), then
    /// the timers that are due. Returns false once `.stop` was among the items.
    @discardableResult
    func turn(_ items: [EngineInbox.Item]) throws(EngineError) -> Bool {
        try whileRunning { () throws(EngineError) -> Bool in
            var stopping = false
            var deliveries: [Arrival] = []
            deliveries.reserveCapacity(items.count)
            var answers: [(RelayConnection, RelayEvent)] = []
            for item in items {
                switch item {
                case .stop:
                    stopping = true
                case .wake(let byCommand):
                    if policy.followsStore { try lookAtStore(byCommand: byCommand) }
                case .reconnect:
                    reconnectNow()
                case .durable(let result):
                    try finishDurable(result)
                case let .connected(address, generation, client):
                    try connected(address, generation, client)
                case let .connectFailed(address, generation, reason):
                    connectFailed(address, generation, reason)
                case let .writable(address, generation):
                    guard let connection = connections[address], connection.generation == generation, connection.client != nil
                    else { continue }
                    try flushBatches(&deliveries, &answers)
                    try backlogDrained(connection)
                case let .delivery(address, generation, inbound):
                    guard let connection = connections[address], connection.generation == generation else { continue }
                    if connection.client == nil {
                        connection.early.append(.delivery(inbound.delivery))
                        continue
                    }
                    deliveries.append((connection, inbound))
                case let .relay(address, generation, event):
                    guard let connection = connections[address], connection.generation == generation else { continue }
                    if connection.client == nil {
                        connection.early.append(event)
                        continue
                    }
                    switch event {
                    case .sent, .refused: answers.append((connection, event))
                    default:
                        try flushBatches(&deliveries, &answers)
                        try handle(event, on: connection)
                    }
                }
            }
            try flushBatches(&deliveries, &answers)
            BackgroundRelease.shared.release(items)
            try runTimers()
            onTurnEnd?(ticks)
            connectWhereNeeded()
            publishKeyringIfNeeded()
            try AccountService.wrap { try expiry.refresh(store) }
            return !stopping
        }
    }

    /// Runs `work`; damage found in it stops the run without writing anything more,
    /// sessions included.
    private func whileRunning<T>(_ work: () throws(EngineError) -> T) throws(EngineError) -> T {
        do {
            return try work()
        } catch {
            if case .damaged = error { stoppedByDamage = true }
            throw error
        }
    }

    /// When the engine next has a timer due, on the monotonic clock.
    public var nextWake: Double { nextTimer() }

    /// One turn with what was posted to this engine so far, without waiting: for a caller
    /// that drives the engine itself (the simulation) after `begin()`. False after `stop()`.
    @discardableResult
    public func step() throws(EngineError) -> Bool {
        thread.check()
        return try turn(inbox.takeNow())
    }

    /// Whether anything was posted to this engine since its last turn.
    public var hasPostedItems: Bool { inbox.hasItems }

    /// How often the engine checks whether another process wrote to the store, in case a
    /// wake-up was lost (the socket removed, a full buffer): a stored message waits at most
    /// this long. The check is one `PRAGMA data_version`.
    static let storeLookInterval: Double = 3

    /// A command changed the store: contacts, settings, the outbox and receipts are read again,
    /// and a running view is told to read again what it shows (`byCommand`: not when the
    /// view's own intent woke the engine — it knows what it did).
    func lookAtStore(byCommand: Bool = true) throws(EngineError) {
        thread.check()
        storeWatch.wakeListener?.looked()
        storeWatch.lastLook = ticks
        // Read before looking: a commit made during the look is seen at the next check.
        storeWatch.versionSeen = try AccountService.wrap { try store.otherWritersVersion() }
        expiry.forget()
        try reloadConversations()
        receipts.schedule(urgent: false, context: self)
        if byCommand { emit(.changedElsewhere) }
    }

    /// The backstop for lost wake-ups: looks at the store if another process wrote to it.
    func lookAtStoreIfChanged() throws(EngineError) {
        // The deadline's own sum: `ticks - lastLook` may fall short of it by a rounding.
        guard ticks >= storeWatch.nextDeadline else { return }
        storeWatch.lastLook = ticks
        guard try AccountService.wrap({ try store.otherWritersVersion() }) != storeWatch.versionSeen else { return }
        try lookAtStore()
    }

    /// Asks a running engine to stop (from any thread).
    public func stop() { inbox.post(.stop) }

    /// Tells a running engine the store changed (from any thread): the in-process form of
    /// `WakeSignal.poke`.
    public func wake() { inbox.post(.wake(byCommand: false)) }

    /// Asks a running engine to try its offline relays now (from any thread): `/reconnect`.
    public func reconnect() { inbox.post(.reconnect) }

    private func flushBatches(_ deliveries: inout [Arrival],
                              _ answers: inout [(RelayConnection, RelayEvent)]) throws(EngineError) {
        if !answers.isEmpty { try handleAnswers(answers); answers.removeAll() }
        if !deliveries.isEmpty {
            try handleDeliveries(deliveries)
            BackgroundRelease.shared.release(deliveries)
            deliveries = []
        }
    }

    /// The end of a run: what waits for the disk is synced and acknowledged, sessions are
    /// saved and connections closed. `run` does it; a caller driving `turn` calls it.
    public func shutDown() {
        // Connections that finished but were never taken: closed, as are later ones.
        for case .connected(_, _, let link) in inbox.close() { link.close() }
        guard !stoppedByDamage else {
            commits.walSync.stop()
            for connection in connections.values { connection.client?.close() }
            return
        }
        // Batches still waiting for the disk: synced here and acted on (acknowledged).
        if !commits.awaitingDisk.isEmpty {
            _ = try? AccountService.wrap { try commits.walSync.syncNow() }
            _ = try? finishAwaitingDisk(through: commits.walSync.lastRequested)
        }
        commits.walSync.stop()
        let t = now
        _ = try? AccountService.wrap {
            try store.transaction { tx in
                for channel in channels.values where channel.saved?.current != nil || channel.saved?.unsaved == true {
                    channel.dropLink(at: t)
                    try persist(channel, tx)
                }
            }
            // No sealed state from before a key was used stays in the WAL (`KeyErasure`).
            try store.truncateLog()
        }
        for connection in connections.values { connection.client?.close() }
    }

    // MARK: conversations

    /// Reads contacts again (a contact added, blocked or deleted by a command) and flushes
    /// whatever the store now holds for them.
    func reloadConversations(starting: Bool = false) throws(EngineError) {
        settings = try AccountService.wrap { try EngineSettings(store: store) }
        let current = try account.identity(unless: identity)
        let rotated = current.accountKey.publicKey != identity.accountKey.publicKey
        if rotated {
            // `keys rotate` ran while we were running. Conversations keep speaking the key
            // their contact pinned (now the previous one) and announce the new one. The
            // account moved to a new mailbox: connections start again under it.
            let movedMailbox = current.mailbox != identity.mailbox
            identity = current
            if movedMailbox { for connection in connections.values { connection.client?.close() } }
        }
        if rotated || starting { try rekeyGroups() }
        let contacts = try AccountService.wrap { try store.contacts(includingDeleted: true, includingMembers: true) }
        var verified: [PairwiseChannel] = []
        // Another process renamed, muted, blocked or deleted a contact: the view's list
        // says so at once (it keeps its windows by id, so a rename leaves them open).
        var listChanged = false
        for contact in contacts {
            if let existing = channels[contact.id],
               existing.contact.accountKey != contact.accountKey || existing.me.account.publicKey != myKey(for: contact).publicKey {
                // Keys changed (their code entered again, a rotation): set it up again.
                // Another account key pinned by another process (`add` after Keys don't match,
                // `accept --replace`) dropped the stored session with it: it is not written back.
                if existing.contact.accountKey != contact.accountKey { existing.saved = nil }
                try retire([existing])
            }
            if let existing = channels[contact.id] {
                let before = existing.contact
                listChanged = listChanged || before.name != contact.name || before.displayState != contact.displayState
                    || before.isDeleted != contact.isDeleted
                let wasReachable = existing.isReachable
                let wasAwaitingVerification = existing.awaitingVerification
                existing.contact = contact
                if wasAwaitingVerification && !existing.awaitingVerification {
                    log("\(contact.name)'s new device is verified: sending what waited")
                    verified.append(existing)
                }
                // No longer reachable: the link is given up (a contact without one has nothing to give up).
                if !existing.isReachable { leaveLink(existing, .detached) }
                if existing.isReachable && !wasReachable { present(existing) }
                continue
            }
            let me = myKey(for: contact)
            guard contact.state != .request, let secret = try? ConversationSecret(myAccount: me, peerAccountKey: contact.accountKey)
            else { continue }
            let relay: RelayAddress
            if secret.hostedOnMyRelay {
                relay = identity.relay
            } else if let text = contact.relayAddress, let address = try? RelayAddress(parsing: text) {
                relay = address
            } else {
                continue
            }
            let channel = PairwiseChannel(contact: contact, secret: secret, relay: relay, saved: try loadState(contact),
                                                me: Handshake.LocalIdentity(account: me, device: account.device))
            channel.recovery = try AccountService.wrap { try store.recoveryFlags(contact: contact.id) }
            channel.formerSecrets = (channels.retiredSecrets.removeValue(forKey: contact.id) ?? []).filter {
                $0.myAccountKey != secret.myAccountKey || $0.peerAccountKey != secret.peerAccountKey
            }
            channels[contact.id] = channel
            present(channel)
        }
        for channel in channels.values {
            if rotated { try announceRotationIfNeeded(channel) }
            // A message whose acknowledgement timed out (Not confirmed) and that the user
            // sent again (Sending once more) goes again now, not at the next session.
            for row in channel.traffic.sent where channel.acknowledgementDeadlines[row] == nil {
                if try AccountService.wrap({ try store.message(row) })?.status == .sending { channel.traffic.sent.remove(row) }
            }
            try flushOutbox(channel)
        }
        for channel in verified { try sendWhatWaits(channel) }
        if listChanged { emit(.conversationsChanged) }
    }

    /// The pairwise channels a conversation's messages go through: one per other member.
    /// Every conversation is direct for now, so it is the channel to its one contact (none
    /// while that contact has no channel: a request, or no relay known).
    func channels(of conversation: ConversationID) -> [PairwiseChannel] {
        channels[ContactID(conversation)].map { [$0] } ?? []
    }

    /// Gives the conversation's link up (`.detached`: a blocked contact, Keys don't match;
    /// `.dropped`: set up again under new keys) and tells the relay, which tells the peer:
    /// otherwise the peer would keep the old link as live and ignore the next one.
    func leaveLink(_ channel: PairwiseChannel, _ event: ConversationLink.Event, at t: Int64? = nil) {
        if let link = channel.linkState.link, let connection = connections[channel.relay],
           connection.generation == link.generation, let client = connection.client {
            try? client.leave(link.id)   // a closed connection has left every link already
        }
        _ = channel.apply(event, at: t ?? now)
    }

    /// Ends these conversations' sessions in this run and forgets them (their saved state is
    /// kept, so they come back from the store).
    func retire(_ retired: [PairwiseChannel]) throws(EngineError) {
        let t = now
        for channel in retired {
            leaveLink(channel, .dropped, at: t)
            channels[channel.contact.id] = nil
            channels.retiredSecrets[channel.contact.id] = Array(([channel.secret] + channel.formerSecrets).prefix(3))
        }
        try AccountService.wrap { try store.transaction { tx in for c in retired { try persist(c, tx) } } }
    }

    /// A conversation's saved state for this run; a damaged one stops the engine (`.damaged`).
    func loadState(_ contact: Contact) throws(EngineError) -> SavedSessionState? {
        guard var state = try account.savedState(of: contact, in: store) else { return nil }
        // A new run never sends under an old session: its keys only read what waits.
        state.endCurrent(at: now)
        state.prune(now: now)
        return state
    }

    func persist(_ channel: PairwiseChannel, _ tx: StoreTransaction) throws {
        guard let saved = channel.saved else { return }
        channels.keyringDirty = true
        try tx.putSealedState(contact: channel.contact.id, sealed: account.sealState(saved, of: channel.contact.id), at: now)
        channel.saved?.stored()
        commits.erasure.touched(at: ticks)
    }

    /// Offers this conversation's rendezvous codes at its relay.
    func present(_ channel: PairwiseChannel) {
        guard policy.pairs, channel.isReachable, let connection = connections[channel.relay], let client = connection.client else { return }
        let presentation: RendezvousCode.Presentation
        switch (channel.saved?.reconnectCounter, channel.recoveryCode) {
        case (nil, _):
            presentation = .startedOver
        case (let c?, .listening):
            presentation = .counterAndRecovery(c)
        case (let c?, .due):
            presentation = .counter(c)
        case (let c?, .notYet):
            presentation = .counter(c)
            channel.recoveryCode = .due(at: ticks + Self.recoveryCodeAfterSeconds)
        }
        let codes = RendezvousCode.presented(for: channel.secret, at: now, presentation)
        for code in codes { channels.codeIndex[HashedBytes(code.bytes)] = channel.contact.id }
        // Not yet accepted our rotated key: the codes of the conversation under it too. Their
        // acceptance may have been lost on the way while they moved on to it; only they and
        // we can make those codes, so a link on one is their acceptance.
        var rotation: [RendezvousCode] = []
        if identity.previous != nil, !channel.contact.rotationAcknowledged,
           let next = try? ConversationSecret(myAccount: identity.accountKey, peerAccountKey: channel.contact.accountKey),
           next.hostedOnMyRelay == channel.secret.hostedOnMyRelay {
            rotation = RendezvousCode.presented(for: next, at: now, presentation)
            for code in rotation { channels.rotationCodes[HashedBytes(code.bytes)] = channel.contact.id }
        }
        channels.keyringDirty = true
        do { try client.present((codes + rotation).map(\.bytes)) } catch { log("cannot present codes: \(error)") }
    }

    func emit(_ event: ChatEvent) { onEvent?(event) }

    /// Hands the relay reader threads the codes and receive keys of this moment.
    func publishKeyringIfNeeded() { channels.publishKeyringIfNeeded() }
}
