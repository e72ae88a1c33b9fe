import Foundation
import RChatCore
import RChatCrypto
import RChatEngine
import RChatNet
import RChatRelayClient
import RChatStore

/// One person: an account's home and device directory on its phone's simulated disk (a real
/// store, its SQLite files in memory), its engine driven turn by turn on virtual time, and
/// the connection its commands (`rchat send`, the view's marks) write through.
final class SimulatedAccount {
    let name: String
    let host: HostAddress
    let directory: String
    /// The phone's disk: every store of the account, whatever its home (reinstalls, new phones).
    let disk: SimulatedDisk
    private(set) var locations: Locations
    private(set) var engine: Engine?
    private var durability: SimulatedDurability?
    private var commandService: AccountService?
    /// Bumped at every reinstall (a new home) and new phone (a new device directory too).
    private(set) var installs = 0

    /// Its place among the world's accounts.
    let index: Int

    init(name: String, index: Int, directory: String) {
        self.name = name
        self.index = index
        self.directory = directory
        var bytes = [UInt8](repeating: 0, count: 16)
        bytes[0] = 0xFD
        bytes[15] = UInt8(index + 1)
        host = bytes.withUnsafeBytes { HostAddress(bytes: $0) }
        locations = Locations(home: "\(directory)/\(name)-home-0", deviceDirectory: "\(directory)/\(name)-device-0")
        disk = SimulatedDisk(prefix: "\(directory)/\(name)-")
    }

    var isRunning: Bool { engine != nil }

    /// When the engine next has a timer due, as computed after its last turn (or start):
    /// what a real engine's thread sleeps until (`Engine.run`). Its deadlines change only in
    /// a turn; computing them walks every component, once per turn instead of at every event.
    var nextWake: Double? {
        guard let engine else { return nil }
        if let wakeAfterTurn { return wakeAfterTurn }
        let wake = engine.nextWake
        wakeAfterTurn = wake
        return wake
    }
    private var wakeAfterTurn: Double?

    /// One turn of the engine (`Engine.step`).
    func turn() throws(EngineError) {
        wakeAfterTurn = nil
        _ = try engine?.step()
    }

    func create(relay: RelayAddress, clock: VirtualClock) throws {
        try AccountService.create(at: locations, name: name, relay: relay, clock: clock)
    }

    /// The commands' own connection to the store (another process in real life).
    func commands(_ clock: VirtualClock) throws -> AccountService {
        if let commandService { return commandService }
        let service = try AccountService(locations: locations, clock: clock)
        commandService = service
        return service
    }

    func start(in world: SimulatedWorld) throws {
        precondition(engine == nil)
        let account = try AccountService(locations: locations, clock: world.clock)
        let scheduler = world.scheduler, network = world.network, owner = name, host = host
        let durability = SimulatedDurability(scheduler: scheduler, disk: disk, delay: { world.syncDelay() })
        let environment = EngineEnvironment(
            monotonic: world.clock,
            dialer: MemoryDialer(network: network, owner: owner, host: host),
            durability: { store, report in durability.attach(report, log: store.path + "-wal") },
            listensForWakeUps: false)
        let trace = world.trace
        let engine = try Engine(account: account, environment: environment) { trace.note("\(owner): \($0)") }
        self.durability = durability
        self.engine = engine
        wakeAfterTurn = nil
        try engine.begin()
        world.trace.note("\(name): engine started")
    }

    /// A clean stop: what waits for the disk is synced and acknowledged, sessions saved.
    func stop(in world: SimulatedWorld) {
        guard let engine else { return }
        engine.shutDown()
        self.engine = nil
        durability = nil
        world.trace.note("\(name): engine stopped")
    }

    /// Killed: nothing after the last commit happens — no acknowledgement of a batch whose
    /// sync was still pending, no saved session.
    func crash(in world: SimulatedWorld) {
        guard engine != nil else { return }
        durability?.crashed = true
        engine = nil
        durability = nil
        world.network.processKilled(name)
        world.trace.note("\(name): engine killed")
    }

    /// The phone loses power: the engine and the commands are gone at once (as `crash`), and
    /// the disk keeps what was synced and drops or tears the rest. Returns the sectors that
    /// were not synced.
    func powerCut(seed: UInt64, in world: SimulatedWorld) -> Int {
        let unsynced = disk.powerCut(seed: seed)
        commandService = nil
        if engine != nil {
            durability?.crashed = true
            engine = nil
            durability = nil
            world.network.processKilled(name)
        }
        world.trace.note("\(name): power cut (\(unsynced) sectors not synced)")
        return unsynced
    }

    /// Whether a commit waits for its sync (a kill now falls between the two).
    var hasUnsyncedCommits: Bool { durability?.pending ?? false }

    /// A reinstall (same device directory) or new phone (a new one): export, a new
    /// home, `init --import`. The engine must be stopped.
    func reinstall(newPhone: Bool, in world: SimulatedWorld) throws {
        precondition(engine == nil)
        let service = try commands(world.clock)
        // What `rchat account export` seals under a passphrase (the key derivation would
        // take most of a run's time, and changes nothing the simulation checks).
        var backup = try service.backup()
        defer { backup.wipeSecrets() }
        commandService = nil
        installs += 1
        locations = Locations(home: "\(directory)/\(name)-home-\(installs)",
                              deviceDirectory: newPhone ? "\(directory)/\(name)-device-\(installs)" : locations.deviceDirectory)
        try AccountService.restore(at: locations, backup: backup, clock: world.clock)
        world.trace.note("\(name): \(newPhone ? "new phone" : "reinstalled")")
    }

    func close() {
        engine = nil
        commandService = nil
    }
}

/// Group commit on virtual time: each sync request syncs the store's log on the simulated
/// disk after a short delay and is reported then, unless the engine was killed first.
final class SimulatedDurability: CommitDurability, @unchecked Sendable {
    // @unchecked: used on the simulation's one thread only.
    private let scheduler: Scheduler
    private let delay: () -> Double
    private let disk: SimulatedDisk
    private var log = ""
    private var report: WALSync.Report?
    private var requested: UInt64 = 0
    private var reported: UInt64 = 0
    var crashed = false

    init(scheduler: Scheduler, disk: SimulatedDisk, delay: @escaping () -> Double) {
        self.scheduler = scheduler
        self.disk = disk
        self.delay = delay
    }

    /// `log`: the store's write-ahead log, which a sync makes durable.
    func attach(_ report: @escaping WALSync.Report, log: String) -> SimulatedDurability {
        self.report = report
        self.log = log
        return self
    }

    var pending: Bool { reported < requested }

    func request() -> UInt64 {
        requested += 1
        let n = requested
        scheduler.after(delay()) { [weak self] in
            guard let self, !self.crashed else { return }
            self.disk.sync(self.log)
            self.reported = max(self.reported, n)
            self.report?(.success(n))
        }
        return n
    }

    func syncNow() throws(StoreError) {
        disk.sync(log)
        reported = requested
    }
    var lastRequested: UInt64 { requested }
    func stop() {}
}

/// The engine's dialer on the memory network, for one account.
struct MemoryDialer: RelayDialer {
    let network: MemoryNetwork
    let owner: String
    let host: HostAddress

    func dial(_ address: RelayAddress, mailboxKey: SigningKey, stallTimeout: Double,
              events: @escaping @Sendable (RelayEvent) -> Void, writable: @escaping @Sendable () -> Void,
              done: @escaping @Sendable (Result<any RelayLink, RelayClientError>) -> Void) {
        network.dial(from: owner, host: host, address: address, mailboxKey: mailboxKey, events: events, writable: writable, done: done)
    }
}
