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

    var connections: [RelayAddress: RelayConnection] = [:]
    var conversations: [ContactID: LiveConversation] = [:]
    /// Secrets of conversations retired in this run, for the conversation that replaces each.
    var retiredSecrets: [ContactID: [ConversationSecret]] = [:]
    /// Every rendezvous code presented in this run → its conversation.
    var codeIndex: [HashedBytes: ContactID] = [:]
    /// Keys published to the relay reader threads, to open envelopes there.
    let keyring = EnvelopeKeyring()
    /// Codes or keys changed since the keyring was last published.
    var keyringDirty = true
    /// Group commit: batches of messages and receipts are committed without waiting for the
    /// disk; this thread syncs the WAL, and each batch is acted on once it reports.
    lazy var walSync: any CommitDurability = { [inbox] in environment.durability(store) { inbox.post(.durable($0)) } }()
    /// Committed batches waiting for the disk, in commit order, with their sync request.
    var awaitingDisk: [(request: UInt64, after: AfterCommit)] = []
    /// The sync of what earlier runs left in the WAL, and the last sync reported.
    var startupSync: UInt64 = 0
    var durableThrough: UInt64 = 0
    /// When receipts go next, on the monotonic clock (`ticks`), like every timer below.
    var receiptsDue: Double?
    var forgedFrames = 0
    var lastOutboxSweep: Double
    /// The local wake-up's listener while `run` runs (nil: it could not listen).
    var wakeListener: WakeListener?
    /// The backstop for a lost wake-up: when the store was last looked at, and its
    /// `otherWritersVersion` then.
    var lastStoreLook: Double
    var storeVersionSeen: Int64 = 0
    /// What this run may do: everything, or what `rchat check` may (`EnginePolicy`).
    var policy = EnginePolicy.full
    var drainedRelays: Set<RelayAddress> = []
    /// Files this run went on with after an earlier one (logged once each), and the chunks
    /// of each file this run wrote here.
    var attachmentsResumed: Set<MessageRowID> = []
    var chunksWrittenThisRun: [MessageRowID: Int] = [:]
    /// Files being sent in this run, with their chunk makers.
    var outgoingStreams: [MessageRowID: OutgoingStream] = [:]
    /// Files being received: the chunk count last reported to the sender.
    var fileProgressReported: [MessageRowID: Int] = [:]
    /// Seconds between pings on each relay connection (tests shorten it): a relay closes a
    /// connection that waits for nothing and sends nothing for its idle timeout.
    var keepaliveSeconds = RelayProtocol.keepaliveSeconds
    /// The run stopped on damage (`.damaged`): nothing more is written, sessions included.
    var stoppedByDamage = false
    /// Seconds a relay may take none of the bytes queued for it before its connection is
    /// given up and made again (`RelayClient`'s `stallTimeout`).
    var relayStallSeconds: Double = 20
    /// Slot lengths and cover intervals are drawn from libsodium (seeded in the simulation).
    var random = SodiumRandomNumberGenerator()
    /// Called on the engine thread for every change a view should show.
    public var onEvent: (@Sendable (ChatEvent) -> Void)?
    /// Called on the engine thread at the end of every turn (at least once a second while
    /// it runs), with the engine's monotonic time in seconds.
    public var onTurnEnd: (@Sendable (Double) -> Void)?

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
        lastOutboxSweep = started
        lastStoreLook = started
        self.log = log
        identity = try account.identity()
        settings = try AccountService.wrap { try EngineSettings(store: account.store) }
        // Before anything of this run is written: every page of the file is sound, and
        // every saved session opens. Damage is reported and left as it is.
        try AccountService.wrap { try account.store.checkWholeFile() }
        for contact in try AccountService.wrap({ try account.store.contacts(includingDeleted: true) }) {
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
                wakeListener = try WakeListener(home: account.locations.home) { inbox.post(.wake(byCommand: true)) }
            } catch {
                log("the local wake-up is off (\(error)); new messages are found within \(Int(Self.storeLookInterval)) s")
            }
        }
        defer {
            wakeListener?.stop()
            wakeListener = nil
            shutDown()
        }
        try begin()
        while end.map({ ticks < $0 }) ?? true {
            let deadline = min(end ?? .infinity, nextTimer())
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
            if policy.groupsCommits { startupSync = walSync.request() }
            storeVersionSeen = try AccountService.wrap { try store.otherWritersVersion() }
            try reloadConversations()
            publishKeyringIfNeeded()
            connectWhereNeeded()
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
            if policy.followsStore { try lookAtStoreIfChanged() }
            connectWhereNeeded()
            publishKeyringIfNeeded()
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
        wakeListener?.looked()
        lastStoreLook = ticks
        // Read before looking: a commit made during the look is seen at the next check.
        storeVersionSeen = try AccountService.wrap { try store.otherWritersVersion() }
        try reloadConversations()
        scheduleReceipts(urgent: false)
        if byCommand { emit(.changedElsewhere) }
    }

    /// The backstop for lost wake-ups: looks at the store if another process wrote to it.
    func lookAtStoreIfChanged() throws(EngineError) {
        guard ticks - lastStoreLook >= Self.storeLookInterval else { return }
        lastStoreLook = ticks
        guard try AccountService.wrap({ try store.otherWritersVersion() }) != storeVersionSeen else { return }
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
            walSync.stop()
            for connection in connections.values { connection.client?.close() }
            return
        }
        // Batches still waiting for the disk: synced here and acted on (acknowledged).
        if !awaitingDisk.isEmpty {
            _ = try? AccountService.wrap { try walSync.syncNow() }
            _ = try? finishAwaitingDisk(through: walSync.lastRequested)
        }
        walSync.stop()
        let t = now
        _ = try? AccountService.wrap {
            try store.transaction { tx in
                for conversation in conversations.values where conversation.saved?.current != nil {
                    conversation.dropLink(at: t)
                    try persist(conversation, tx)
                }
            }
        }
        for connection in connections.values { connection.client?.close() }
    }

    // MARK: conversations

    /// Reads contacts again (a contact added, blocked or deleted by a command) and flushes
    /// whatever the store now holds for them.
    func reloadConversations() throws(EngineError) {
        settings = try AccountService.wrap { try EngineSettings(store: store) }
        let current = try account.identity()
        let rotated = current.accountKey.publicKey != identity.accountKey.publicKey
        if rotated {
            // `keys rotate` ran while we were running. Conversations keep speaking the key
            // their contact pinned (now the previous one) and announce the new one. The
            // account moved to a new mailbox: connections start again under it.
            let movedMailbox = current.mailbox != identity.mailbox
            identity = current
            if movedMailbox { for connection in connections.values { connection.client?.close() } }
        }
        let contacts = try AccountService.wrap { try store.contacts(includingDeleted: true) }
        var verified: [LiveConversation] = []
        // Another process renamed, muted, blocked or deleted a contact: the view's list
        // says so at once (it keeps its windows by id, so a rename leaves them open).
        var listChanged = false
        for contact in contacts {
            if let existing = conversations[contact.id],
               existing.contact.accountKey != contact.accountKey || existing.me.account.publicKey != myKey(for: contact).publicKey {
                // Keys changed (their code entered again, a rotation): set it up again.
                // Another account key pinned by another process (`add` after Keys don't match,
                // `accept --replace`) dropped the stored session with it: it is not written back.
                if existing.contact.accountKey != contact.accountKey { existing.saved = nil }
                try retire([existing])
            }
            if let existing = conversations[contact.id] {
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
            let conversation = LiveConversation(contact: contact, secret: secret, relay: relay, saved: try loadState(contact),
                                                me: Handshake.LocalIdentity(account: me, device: account.device))
            conversation.recovery = try AccountService.wrap { try store.recoveryFlags(contact: contact.id) }
            conversation.formerSecrets = (retiredSecrets.removeValue(forKey: contact.id) ?? []).filter {
                $0.myAccountKey != secret.myAccountKey || $0.peerAccountKey != secret.peerAccountKey
            }
            conversations[contact.id] = conversation
            present(conversation)
        }
        for conversation in conversations.values {
            if rotated { try announceRotationIfNeeded(conversation) }
            // A message whose acknowledgement timed out (Not confirmed) and that the user
            // sent again (Sending once more) goes again now, not at the next session.
            for row in conversation.sent where conversation.acknowledgementDeadlines[row] == nil {
                if try AccountService.wrap({ try store.message(row) })?.status == .sending { conversation.sent.remove(row) }
            }
            try flushOutbox(conversation)
        }
        for conversation in verified { try sendWhatWaits(conversation) }
        if listChanged { emit(.conversationsChanged) }
    }

    /// Gives the conversation's link up (`.detached`: a blocked contact, Keys don't match;
    /// `.dropped`: set up again under new keys) and tells the relay, which tells the peer:
    /// otherwise the peer would keep the old link as live and ignore the next one.
    func leaveLink(_ conversation: LiveConversation, _ event: ConversationLink.Event, at t: Int64? = nil) {
        if let link = conversation.linkState.link, let connection = connections[conversation.relay],
           connection.generation == link.generation, let client = connection.client {
            try? client.leave(link.id)   // a closed connection has left every link already
        }
        _ = conversation.apply(event, at: t ?? now)
    }

    /// Ends these conversations' sessions in this run and forgets them (their saved state is
    /// kept, so they come back from the store).
    func retire(_ retired: [LiveConversation]) throws(EngineError) {
        let t = now
        for conversation in retired {
            leaveLink(conversation, .dropped, at: t)
            conversations[conversation.contact.id] = nil
            retiredSecrets[conversation.contact.id] = Array(([conversation.secret] + conversation.formerSecrets).prefix(3))
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

    func persist(_ conversation: LiveConversation, _ tx: StoreTransaction) throws {
        guard let saved = conversation.saved else { return }
        keyringDirty = true
        try tx.putSealedState(contact: conversation.contact.id, sealed: account.sealState(saved, of: conversation.contact.id), at: now)
    }

    /// Offers this conversation's rendezvous codes at its relay.
    func present(_ conversation: LiveConversation) {
        guard policy.pairs, conversation.isReachable, let connection = connections[conversation.relay], let client = connection.client else { return }
        let presentation: RendezvousCode.Presentation
        switch (conversation.saved?.reconnectCounter, conversation.recoveryCode) {
        case (nil, _):
            presentation = .startedOver
        case (let c?, .listening):
            presentation = .counterAndRecovery(c)
        case (let c?, .due):
            presentation = .counter(c)
        case (let c?, .notYet):
            presentation = .counter(c)
            conversation.recoveryCode = .due(at: ticks + Self.recoveryCodeAfterSeconds)
        }
        let codes = RendezvousCode.presented(for: conversation.secret, at: now, presentation)
        for code in codes { codeIndex[HashedBytes(code.bytes)] = conversation.contact.id }
        keyringDirty = true
        do { try client.present(codes.map(\.bytes)) } catch { log("cannot present codes: \(error)") }
    }

    func emit(_ event: ChatEvent) { onEvent?(event) }

    /// Hands the relay reader threads the codes and receive keys of this moment.
    func publishKeyringIfNeeded() {
        guard keyringDirty else { return }
        keyringDirty = false
        let entries = conversations.values.map { conversation in
            EnvelopeKeyring.Entry(contact: conversation.contact.id, secret: conversation.secret,
                                  keys: conversation.saved?.receiveKeys ?? [])
        }
        keyring.publish(entries, codes: codeIndex)
    }
}
