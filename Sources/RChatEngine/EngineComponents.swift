import Foundation
import RChatCore
import RChatCrypto
import RChatWire
import RChatRelayClient
import RChatStore

// The engine's components (docs/ARCHITECTURE.md, "The engine in components"). Each owns its
// state and says when it next has work of its own (`nextDeadline`, on the engine's monotonic
// clock; infinity: none); `Engine.turn` dispatches the inbox's events to them and sleeps until
// the earliest deadline among them, as an event loop does with its scheduled tasks.

/// What every component that sends frames on the pairwise channels reaches of the engine
/// (`ReceiptContext`, `RecoveryContext`, `OutboxContext`, `TransfersContext` add what each
/// needs besides): the store, where what it sends is owed and settled; the clock that makes
/// envelope ids, and the times; the log; and a frame sent on a channel's link, whose answer
/// from the relay runs `completion` (returns its sequence number).
protocol ComponentContext {
    var store: Store { get }
    var clock: any Clock { get }
    /// Wall time, for what is stored, shown and signed.
    var now: Int64 { get }
    /// The engine's monotonic time, for deadlines.
    var ticks: Double { get }
    var log: Logger { get }
    func sendOnLink(_ channel: PairwiseChannel, _ frame: LinkFrame, as completion: RelayCompletion, flush: Bool) throws -> UInt64
}

/// A component that seals items (`OutboxContext`, `TransfersContext`).
protocol SealsItems {
    /// The channel's state is stored now, in a transaction of its own that is on the disk
    /// when this returns: an item sealed under a new ratchet key of this side's goes only
    /// then, so a power cut cannot take back a key the peer may answer to.
    func storeSession(of channel: PairwiseChannel) throws(EngineError)
}

extension SealsItems {
    /// `item`'s envelope in the channel's session (`saved`, the caller's copy of its
    /// state); one that took the sending half of a DH step has its state stored first.
    func sealItem(_ item: OutboxItem, _ channel: PairwiseChannel, _ saved: inout SavedSessionState) throws(EngineError) -> [UInt8]? {
        let keys = saved.ratchetKeys
        guard let envelope = saved.seal(kind: item.envelopeKind, messageID: item.id, body: item.envelopeBody, conversation: channel.secret)
        else { return nil }
        if saved.ratchetKeys != keys {
            channel.saved = saved
            try storeSession(of: channel)
        }
        return envelope
    }
}

/// A component's parts by key (its relays, its channels), read and replaced as a dictionary's.
class Keyed<Key: Hashable, Part> {
    fileprivate var parts: [Key: Part] = [:]

    subscript(key: Key) -> Part? {
        get { parts[key] }
        set { parts[key] = newValue }
    }

    var values: Dictionary<Key, Part>.Values { parts.values }
}

/// The relays this account uses: one `RelayConnection` each, with its backoff and its pings.
final class Connections: Keyed<RelayAddress, RelayConnection> {
    /// Relays that said they handed over everything they held (`rchat check` waits for it).
    var drained: Set<RelayAddress> = []
    /// Seconds between pings on each relay connection (tests shorten it): a relay closes a
    /// connection that waits for nothing and sends nothing for its idle timeout.
    var keepaliveSeconds = RelayProtocol.keepaliveSeconds
    /// Seconds a relay may take none of the bytes queued for it before its connection is
    /// given up and made again (`RelayClient`'s `stallTimeout`).
    var stallSeconds: Double = 20

    /// The next attempt of an offline relay not being dialled.
    var nextAttempt: Double {
        parts.values.reduce(.infinity) { $1.client == nil && !$1.connecting ? min($0, $1.retryAt) : $0 }
    }

    /// The next ping, and the next presentation of away contacts' codes, on a live relay.
    var nextPing: Double { parts.values.reduce(.infinity) { $1.client != nil ? min($0, $1.keepaliveAt) : $0 } }
    var nextPresentation: Double { parts.values.reduce(.infinity) { $1.client != nil ? min($0, $1.presentAgainAt) : $0 } }

    /// When the own mailbox's next cover frame is due (`SteadyTrafficClock`).
    var nextCover: Double { parts.values.reduce(.infinity) { min($0, $1.coverAt) } }
}

/// The pairwise channel to each contact, with what the relay reader threads need to open
/// envelopes: the codes presented in this run and the keys published to them.
final class Channels: Keyed<ContactID, PairwiseChannel> {
    /// Secrets of channels retired in this run, for the channel that replaces each.
    var retiredSecrets: [ContactID: [ConversationSecret]] = [:]
    /// Every rendezvous code presented in this run → its channel.
    var codeIndex: [HashedBytes: ContactID] = [:]
    /// Codes of the conversation a contact who has not accepted our rotated key would speak
    /// in once they did (`Engine.present`): a link on one proves they did.
    var rotationCodes: [HashedBytes: ContactID] = [:]
    /// Keys published to the relay reader threads, to open envelopes there.
    let keyring = EnvelopeKeyring()
    /// Codes or keys changed since the keyring was last published.
    var keyringDirty = true
    /// How many keys ahead of a receiving chain the reader threads get: as far as they may
    /// run ahead of the engine in a backlog.
    static let keysAhead = 512

    // A link frame to send again, an acknowledgement overdue, the recovery code to add, a
    // file's window to reopen: each its own deadline in `Engine.timers`.
    var nextControlRetry: Double {
        parts.values.reduce(.infinity) { next, channel in channel.controlRetries.reduce(next) { min($0, $1.at) } }
    }

    var nextAcknowledgement: Double { parts.values.reduce(.infinity) { min($0, $1.earliestAcknowledgement) } }

    var nextRecoveryCode: Double {
        parts.values.reduce(.infinity) { next, channel in
            if case .due(let at) = channel.recoveryCode { return min(next, at) }
            return next
        }
    }

    var nextWindowReopening: Double { parts.values.reduce(.infinity) { min($0, $1.windowReopensAt ?? .infinity) } }

    /// Whether a refusal postponed something of some channel (`OutboxSweep`).
    var anyBackoffPending: Bool { parts.values.contains { $0.backoffPending } }

    /// When the next steady-traffic slot ends (`SteadyTrafficClock`).
    var nextSlotEnd: Double { parts.values.reduce(.infinity) { min($0, $1.pace.endsAt ?? .infinity) } }

    /// Hands the relay reader threads the codes and receive keys of this moment.
    func publishKeyringIfNeeded() {
        guard keyringDirty else { return }
        keyringDirty = false
        let entries = parts.values.map { channel in
            var entry = EnvelopeKeyring.Entry(contact: channel.contact.id, secret: channel.secret, keys: channel.saved?.legacyReceiveKeys ?? [])
            if let session = channel.receivingSession,
               let (role, keys) = channel.saved?.lookahead(session: session, upTo: Self.keysAhead,
                                                          continuing: channel.keysAhead?.sessionID == session ? channel.keysAhead?.keys : nil) {
                let ahead = EnvelopeKeyring.Ahead(sessionID: session, senderRole: role, keys: keys)
                channel.keysAhead = ahead
                entry.ahead = ahead
            } else {
                channel.keysAhead = nil
            }
            return entry
        }
        keyring.publish(entries, codes: codeIndex)
    }
}

/// Group commit: batches of messages and receipts are committed without waiting for the
/// disk; a sync thread syncs the WAL, and each batch is acted on once it reports
/// (`.durable`). No deadline of its own: the sync's report is an event.
final class CommitPipeline {
    private let makeSync: () -> any CommitDurability
    /// Made at the first commit that waits for it (an engine that never runs starts no thread).
    lazy var walSync: any CommitDurability = makeSync()
    /// Committed batches waiting for the disk, in commit order, with their sync request.
    var awaitingDisk: [(request: UInt64, after: Engine.AfterCommit)] = []
    /// The sync of what earlier runs left in the WAL, and the last sync reported.
    var startupSync: UInt64 = 0
    var durableThrough: UInt64 = 0
    /// When the keys that moved are stored and the WAL truncated (`KeyErasure`).
    var erasure = KeyErasure()

    init(makeSync: @escaping () -> any CommitDurability) { self.makeSync = makeSync }

    /// Whether a batch that touched `channel` still waits for the disk.
    func awaits(_ channel: PairwiseChannel) -> Bool {
        awaitingDisk.contains { $0.after.stored.contains { $0.0 === channel } }
    }

    /// Whether what the store holds of `channel`'s conversation is on the disk: what earlier
    /// runs left was synced, and no batch that touched it waits (a receipt read from the
    /// store relies on it).
    func isDurable(_ channel: PairwiseChannel) -> Bool {
        durableThrough >= startupSync && !awaits(channel)
    }
}

/// What a used key leaves behind (issue 32; docs/PROTOCOL.md "The Double Ratchet"): once a
/// session state was written, the WAL — which holds the sealed states written before it —
/// is truncated when the engine has been quiet `quiet` seconds since the last one, and at
/// least every `longest` seconds while it never is (a ratchet moved since, by cover alone,
/// is stored first).
struct KeyErasure {
    static let quiet: Double = 2
    static let longest: Double = 10

    private(set) var pendingSince: Double?
    private(set) var lastTouch: Double = 0

    /// A session state was written.
    mutating func touched(at now: Double) {
        pendingSince = pendingSince ?? now
        lastTouch = now
    }

    var due: Double {
        guard let since = pendingSince else { return .infinity }
        return min(lastTouch + Self.quiet, since + Self.longest)
    }

    /// Everything touched so far is stored and the log truncated.
    mutating func done() { pendingSince = nil }
}

/// When receipts go next: after the receipt window, at once when many are owed, a second
/// after a refusal (`Receipts`' schedule).
struct ReceiptSchedule {
    private(set) var due: Double?

    var nextDeadline: Double { due ?? .infinity }

    /// Receipts go at `when`, or earlier if they were due earlier.
    mutating func schedule(at when: Double) { due = min(due ?? when, when) }

    /// Whether they are due at `now`; the schedule is cleared by `taken`.
    func isDue(at now: Double) -> Bool { due.map { $0 <= now } ?? false }

    /// A flush began: nothing scheduled until something is owed again.
    mutating func taken() { due = nil }
}

/// Looks at the store for what other processes wrote: at a wake-up, and as a backstop for a
/// lost one every `Engine.storeLookInterval` seconds (its deadline).
struct StoreWatch {
    /// The local wake-up's listener while `run` runs (nil: it could not listen).
    var wakeListener: WakeListener?
    /// When the store was last looked at, and its `otherWritersVersion` then.
    var lastLook: Double
    var versionSeen: Int64 = 0

    var nextDeadline: Double { lastLook + Engine.storeLookInterval }
}

/// The sweep of outbox retries whose backoff passed, once a second while a refusal
/// postponed something (only then: reading a long outbox every second cost the sender a
/// quarter of its time).
struct OutboxSweep {
    static let interval: Double = 1
    var last: Double

    /// Whether the sweep is due at `now`; if so it counts as done.
    mutating func due(at now: Double) -> Bool {
        guard now >= last + Self.interval else { return false }
        last = now
        return true
    }

    /// `pending`: whether some channel waits out a backoff.
    func nextDeadline(pending: Bool) -> Double { pending ? last + Self.interval : .infinity }
}

/// Disappearing messages: the engine wakes when the first stored one's timer runs out. The
/// earliest `expires_at` is read again whenever the store may have changed — after a turn in
/// which this connection wrote (`Store.changesWritten`), and when another process wrote
/// (`forget`, from the look at the store). It is on the wall clock, so a deadline is at most
/// `recheck` away: a clock set forward, or a machine that slept, deletes within that.
struct ExpiryWatch {
    static let recheck: Double = 30
    /// The first timer that runs out (wall clock), as last read; nil: none.
    private(set) var earliest: Int64?
    private var readAtChanges: Int64?

    /// Reads the earliest expiry again if the store changed since it was read.
    mutating func refresh(_ store: some ExpirySource) throws {
        let changes = store.changesWritten
        guard changes != readAtChanges else { return }
        earliest = try store.earliestExpiry()
        readAtChanges = changes
    }

    /// Another process wrote: read again at the next `refresh`.
    mutating func forget() { readAtChanges = nil }

    func isDue(now: Int64) -> Bool { earliest.map { $0 <= now } ?? false }

    /// From the wall clock in milliseconds: in whole seconds a deadline read 0.9 s into a
    /// second would fall 0.9 s after the timer ran out, and an engine that sleeps until its
    /// deadline (`Engine.run`) would delete the message that much late.
    func nextDeadline(ticks: Double, nowMilliseconds: Int64) -> Double {
        earliest.map { ticks + min(Self.recheck, Double(max(0, $0 * 1000 - nowMilliseconds)) / 1000) } ?? .infinity
    }
}

/// Steady and cover traffic's draws: slot lengths and cover intervals from libsodium (seeded
/// in the simulation). Its deadlines are the slots' ends of the channels and the own
/// mailbox's cover (`Channels.nextSlotEnd`, `Connections.nextCover`).
struct SteadyTrafficClock {
    var random = SodiumRandomNumberGenerator()

    mutating func uniform() -> Double { Double.random(in: 0..<1, using: &random) }
}

/// What `ExpiryWatch` reads: the store (`Store`), or a test's stand-in.
protocol ExpirySource {
    var changesWritten: Int64 { get }
    func earliestExpiry() throws -> Int64?
}

extension Store: ExpirySource {}
