import Foundation
import RChatCore
import RChatRelayClient
import RChatStore

/// What an engine reads time from, reaches relays through and makes its commits durable
/// with. `.system` is the real machine; the simulation passes a virtual clock, its in-memory
/// network and a durability it reports on virtual time (docs/ARCHITECTURE.md, "Time and
/// transport").
public struct EngineEnvironment: Sendable {
    /// Every engine timer reads this clock; message times use the account's wall `Clock`.
    public var monotonic: any MonotonicClock
    public var dialer: any RelayDialer
    /// Makes the group commit's syncs: a `WALSync` thread, or the simulation's.
    public var durability: @Sendable (Store, @escaping WALSync.Report) -> any CommitDurability
    /// Whether `run` listens on the account's wake-up socket.
    public var listensForWakeUps: Bool

    public init(monotonic: any MonotonicClock, dialer: any RelayDialer,
                durability: @escaping @Sendable (Store, @escaping WALSync.Report) -> any CommitDurability,
                listensForWakeUps: Bool) {
        self.monotonic = monotonic
        self.dialer = dialer
        self.durability = durability
        self.listensForWakeUps = listensForWakeUps
    }

    public static let system = EngineEnvironment(
        monotonic: SystemMonotonicClock(), dialer: ThreadedRelayDialer(),
        durability: { store, report in WALSync(store: store, report: report) }, listensForWakeUps: true)
}

/// Group commit's other half: a request covers every commit made before it and is reported
/// (`WALSync.Report`) once those commits are durable.
public protocol CommitDurability: AnyObject, Sendable {
    /// Asks for a sync covering every commit made so far; returns its number.
    func request() -> UInt64
    /// Every commit made so far is durable when it returns.
    func syncNow() throws(StoreError)
    /// The number of the last request (0: none yet).
    var lastRequested: UInt64 { get }
    /// No more requests: ends whatever serves them once those made are answered.
    func stop()
}

extension WALSync: CommitDurability {}

/// What a run of the engine may do. `rchat sync` and the view run `.full`; `rchat check`
/// (README, "Alerts and the background check") collects and stores only: it pairs
/// nothing, sends nothing (no codes, no receipts, no cover traffic), tries each relay once
/// and ignores the store's wake-ups. Both go through the same dispatch (`Engine.turn`).
public struct EnginePolicy: Equatable, Sendable {
    /// Presents rendezvous codes and registers the invite: sessions can be set up.
    public var pairs: Bool
    /// Sends the outbox.
    public var sends: Bool
    /// Sends Delivered and Read receipts.
    public var sendsReceipts: Bool
    /// Connects again after a failure or a close (with backoff); else one attempt per relay.
    public var reconnects: Bool
    /// Reads the store again when a command wrote to it.
    public var followsStore: Bool
    /// Batches that can wait for the disk do (group commit); else each is synced at once.
    public var groupsCommits: Bool
    /// Keeps the `steady-traffic` pace: dummies in open sessions, cover to the own mailbox.
    public var sendsCover: Bool

    public static let full = EnginePolicy(pairs: true, sends: true, sendsReceipts: true, reconnects: true,
                                          followsStore: true, groupsCommits: true, sendsCover: true)
    public static let check = EnginePolicy(pairs: false, sends: false, sendsReceipts: false, reconnects: false,
                                           followsStore: false, groupsCommits: false, sendsCover: false)
}
