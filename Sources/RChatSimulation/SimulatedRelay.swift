import Foundation
import RChatCore
import RChatCrypto
import RChatNet
import RChatRelay
import RChatRelayClient

/// `rchat-relay`'s logic (`Relay`) on virtual time and the memory network, with `--persist`:
/// a crash drops it with whatever it had not committed, and a restart loads what it had.
final class SimulatedRelay: RelayLoop {
    let address: RelayAddress
    private let staticKey: AgreementKey
    private let configuration: RelayConfiguration
    private let scheduler: Scheduler
    private let trace: Trace
    private let directory: String
    private unowned let network: MemoryNetwork
    private var relay: Relay?
    /// The relay machine's disk: `--persist`'s database, in memory.
    let disk: SimulatedDisk
    /// Bumped at every start: timers and connections of an earlier one are dead.
    private(set) var incarnation = 0
    private var hooks: [() -> Void] = []
    private var dirty: [MemoryConnection] = []
    private var inIteration = false

    init(directory: String, scheduler: Scheduler, network: MemoryNetwork, trace: Trace) {
        staticKey = AgreementKey.generate()
        address = RelayAddress(host: "relay.sim", port: 7070, publicKey: staticKey.publicKey)
        var configuration = RelayConfiguration(keyFile: directory + "/relay.key")
        configuration.persistPath = directory + "/relay.db"
        disk = SimulatedDisk(prefix: directory + "/relay.db")
        self.configuration = configuration
        self.scheduler = scheduler
        self.network = network
        self.trace = trace
        self.directory = directory
    }

    var isUp: Bool { relay != nil }
    func isCurrent(_ incarnation: Int) -> Bool { relay != nil && incarnation == self.incarnation }

    func start() throws {
        precondition(relay == nil)
        incarnation += 1
        hooks = []
        dirty = []
        let trace = self.trace
        relay = try Relay(inMemory: configuration, address: address, staticKey: staticKey, loop: self,
                          clock: scheduler.clock, log: Logger(prefix: "rchat-relay: ") { [directory] in
                              // The run's folder differs from run to run; the trace must not.
                              trace.note($0.replacingOccurrences(of: directory, with: "<run>")) })
        trace.note("relay started (#\(incarnation))")
    }

    /// Gone at once, as a killed process: nothing more is committed or sent.
    func crash() {
        guard relay != nil else { return }
        relay = nil
        hooks = []
        dirty = []
        trace.note("relay crashed (#\(incarnation))")
        network.relayDied()
    }

    /// The relay's machine loses power: the relay is gone (as `crash`) and its disk keeps what
    /// was synced and drops or tears the rest.
    func powerCut(seed: UInt64) -> Int {
        let unsynced = disk.powerCut(seed: seed)
        trace.note("relay: power cut (\(unsynced) sectors not synced)")
        crash()
        return unsynced
    }

    func accept(_ connection: MemoryConnection, from host: HostAddress) -> (any RelayConnectionReceiver)? {
        relay?.accept(connection, from: host)
    }

    /// One loop iteration: `body`, then the hooks (the persistence commit), then what the
    /// connections queued leaves — as `EventLoop.finishIteration`.
    func iteration(_ body: () -> Void) {
        guard relay != nil else { return }
        if inIteration { return body() }
        inIteration = true
        body()
        for hook in hooks { hook() }
        while !dirty.isEmpty {
            let flushing = dirty
            dirty = []
            for connection in flushing { network.flush(connection) }
        }
        inIteration = false
    }

    func needsFlush(_ connection: MemoryConnection) {
        if !dirty.contains(where: { $0 === connection }) { dirty.append(connection) }
    }

    // MARK: RelayLoop

    var now: Double { scheduler.now }

    @discardableResult
    func schedule(after seconds: Double, repeating: Bool, _ action: @escaping () -> Void) -> Int {
        let incarnation = self.incarnation
        func arm() {
            scheduler.after(seconds) { [weak self] in
                guard let self, self.isCurrent(incarnation) else { return }
                self.iteration(action)
                if repeating { arm() }
            }
        }
        arm()
        return 0
    }

    func addBeforeFlush(_ hook: @escaping () -> Void) { hooks.append(hook) }
}

/// What happened in a run: a digest of every line (the same seed gives the same digest) and
/// the last lines, printed with a failure.
final class Trace: @unchecked Sendable {
    // @unchecked: written on the simulation's one thread only (engines and the relay log
    // into it from that thread).
    private(set) var digest: UInt64 = 0xCBF2_9CE4_8422_2325
    private var recent: [String] = []
    private var head = 0
    private let keep: Int
    private(set) var lines = 0
    let clock: VirtualClock

    init(clock: VirtualClock, keep: Int = 400) {
        self.clock = clock
        self.keep = keep
    }

    func note(_ line: String) {
        let stamped = Self.stamp(clock.seconds()) + line
        for byte in stamped.utf8 {
            digest ^= UInt64(byte)
            digest = digest &* 0x100_0000_01B3
        }
        lines += 1
        if recent.count < keep { recent.append(stamped) } else { recent[head] = stamped; head = (head + 1) % keep }
    }

    var tail: [String] { Array(recent[head...] + recent[..<head]) }

    /// Virtual seconds with three decimals, right-aligned in ten columns.
    private static func stamp(_ seconds: Double) -> String {
        let millis = Int((seconds * 1000).rounded())
        let fraction = millis % 1000
        let text = "\(millis / 1000)." + (fraction < 10 ? "00" : fraction < 100 ? "0" : "") + "\(fraction)"
        return String(repeating: " ", count: max(0, 10 - text.count)) + text + " "
    }
}
