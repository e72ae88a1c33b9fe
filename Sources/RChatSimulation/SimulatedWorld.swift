import Foundation
import RChatCore
import RChatCrypto
import RChatEngine
import RChatStore

/// Two or three accounts and a relay in one process on virtual time, driven by one seed
/// (docs/ARCHITECTURE.md, "Deterministic simulation"). `SimulatedWorld.run(seed:)` plays a
/// random history — sends, reads, resends, engine and relay crashes, a reinstall, a new
/// phone, a network that drops, duplicates, reorders and cuts — checking the status and
/// recovery invariants after every step, then heals everything and checks that every
/// message got through.
public final class SimulatedWorld {
    public struct Options: Sendable {
        public var steps = 200
        /// Lines of the trace kept for the outcome's tail.
        public var traceLines = 400
        /// The group mode (`GroupWorld.swift`): 3 to 5 accounts in one group.
        public var groups = false
        /// In the group mode, members rotate their keys too (`--rotations`): off by default
        /// while a lost key-rotation acceptance leaves the two sides on different keys
        /// (one-to-one as well; README, "Simulation").
        public var rotations = false
        public init() {}
    }

    public struct Outcome: Sendable {
        public let seed: UInt64
        public let steps: Int
        /// Empty when every invariant held.
        public let failures: [String]
        /// Of every line the run wrote: the same seed gives the same digest.
        public let digest: UInt64
        /// The last lines of the run, for a failure.
        public let tail: [String]
        public let messages: Int
        /// Power cuts, and those that fell on data written but not synced.
        public let powerCuts: Int
        public let powerCutsLosingData: Int
        public var passed: Bool { failures.isEmpty }

        /// Without its trace's tail.
        var summarized: Outcome {
            Outcome(seed: seed, steps: steps, failures: failures, digest: digest, tail: [], messages: messages,
                    powerCuts: powerCuts, powerCutsLosingData: powerCutsLosingData)
        }
    }

    let seed: UInt64
    let clock = VirtualClock()
    let scheduler: Scheduler
    let trace: Trace
    let network: MemoryNetwork
    var random: SimulationRandom
    /// What the message actions choose (whether a message is a reply, and to what): a stream
    /// apart from `random`, so the runs of seeds from before replies play as they did.
    var itemRandom: SimulationRandom
    /// The replies written and what they quote (`ReplyChecks`).
    var replies = ReplyChecks()
    /// The reactions written, each person's latest (`ReactionChecks`).
    var reactions = ReactionChecks()
    /// The edits and deletes written (`EditChecks`).
    var edits = EditChecks()
    private(set) var relay: SimulatedRelay!
    private(set) var accounts: [SimulatedAccount] = []
    let directory: String
    var invariants: Invariants!
    /// The group mode's (nil otherwise).
    var groupInvariants: GroupInvariants?
    /// `Options.rotations`.
    var rotations = false
    /// The first broken invariant ends the run.
    var failures: [String] = []
    var powerCuts = 0
    var powerCutsLosingData = 0

    init(seed: UInt64, directory: String, traceLines: Int) {
        self.seed = seed
        self.directory = directory
        scheduler = Scheduler(clock: clock)
        trace = Trace(clock: clock, keep: traceLines)
        network = MemoryNetwork(scheduler: scheduler, seed: seed, trace: trace)
        random = SimulationRandom(seed: seed)
        itemRandom = SimulationRandom(seed: seed ^ 0x5265_706C_6965_7321)
    }

    func syncDelay() -> Double { random.uniform(0.0005...0.03) }

    /// Plays one seed. Runs on the calling thread, which it seeds (`SeededRandomness`).
    public static func run(seed: UInt64, options: Options = Options()) -> Outcome {
        SimulatedDisk.useStoreTemplate()
        SeededRandomness.seed(seed)
        defer { SeededRandomness.unseed() }
        let directory = "\(scratchRoot)/rchat-sim-\(seed)-\(getpid())-\(UUID().uuidString.prefix(8))"
        let world = SimulatedWorld(seed: seed, directory: directory, traceLines: options.traceLines)
        defer {
            world.close()
            try? FileManager.default.removeItem(atPath: directory)
        }
        var steps = 0
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            world.rotations = options.rotations
            if options.groups { try world.setUpGroup() } else { try world.setUp() }
            while steps < options.steps && world.failures.isEmpty {
                steps += 1
                try world.step(steps)
            }
            if world.failures.isEmpty { try world.healAndFinish() }
        } catch {
            world.failures.append("step \(steps): \(error)")
        }
        return Outcome(seed: seed, steps: steps, failures: world.failures, digest: world.trace.digest, tail: world.trace.tail,
                       messages: (world.invariants?.messageCount ?? 0) + (world.groupInvariants?.messageCount ?? 0),
                       powerCuts: world.powerCuts, powerCutsLosingData: world.powerCutsLosingData)
    }

    /// Where runs keep their folders: memory-backed when the machine has it (`/dev/shm`),
    /// else the temporary folder. (The stores' SQLite files are on each machine's
    /// `SimulatedDisk`, in memory; the real folder holds only their empty placeholders and
    /// the files written without SQLite: device keys, attachments.)
    static var scratchRoot: String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isDirectory), isDirectory.boolValue,
           access("/dev/shm", W_OK) == 0 {
            return "/dev/shm"
        }
        return FileManager.default.temporaryDirectory.path
    }

    func close() {
        for account in accounts { account.close() }
        relay?.crash()
    }

    // MARK: set-up

    /// `knows(a, b)`: whether `a` enters `b`'s code (every pair, unless told).
    func setUp(accounts count: Int? = nil, knows: ((Int, Int) -> Bool)? = nil) throws {
        relay = SimulatedRelay(directory: directory, scheduler: scheduler, network: network, trace: trace)
        network.attach(relay)
        try relay.start()
        let n = count ?? (random.chance(0.5) ? 3 : 2)
        let names = ["alice", "bob", "carol", "dave", "erin"].prefix(n)
        for (i, name) in names.enumerated() {
            let account = SimulatedAccount(name: name, index: i, directory: directory)
            try account.create(relay: relay.address, clock: clock)
            accounts.append(account)
        }
        for a in accounts {
            for b in accounts where b !== a && knows?(a.index, b.index) ?? true { try introduce(b, to: a) }
        }
        invariants = Invariants(world: self)
        for account in accounts { try account.start(in: self) }
        trace.note("seed \(seed): \(n) accounts")
    }

    /// `a` enters `b`'s contact code (again, after a new phone: that verifies it).
    func introduce(_ b: SimulatedAccount, to a: SimulatedAccount) throws {
        let other = try b.commands(clock)
        let code = try other.identity().contactCode(device: other.device)
        _ = try a.commands(clock).addContact(code, name: b.name)
        a.engine?.wake()
    }

    // MARK: steps

    private func step(_ number: Int) throws {
        let action = groupInvariants == nil ? chooseAction() : chooseGroupAction()
        trace.note("step \(number): \(action)")
        try perform(action)
        try runFor(random.uniform(0.01...1.5))
        try invariants.check(after: "step \(number) (\(action))")
        try groupInvariants?.check(after: "step \(number) (\(action))")
    }

    /// Runs the world for `seconds` of virtual time.
    func runFor(_ seconds: Double) throws {
        let limit = clock.seconds() + seconds
        while failures.isEmpty {
            let nextEngine = try turnEngines()
            let nextEvent = scheduler.nextTime ?? .infinity
            let next = min(nextEvent, nextEngine)
            if next > limit {
                scheduler.advance(to: limit)
                _ = try turnEngines()
                return
            }
            if nextEvent <= nextEngine {
                _ = scheduler.runNext(notAfter: next)
            } else {
                scheduler.advance(to: nextEngine)
            }
        }
    }

    /// Every engine with something posted or a timer due takes turns until none has; returns
    /// the earliest engine's next wake then (`SimulatedAccount.nextWake`).
    private func turnEngines() throws -> Double {
        for _ in 0..<1000 {
            var turned = false
            var earliest = Double.infinity
            for account in accounts {
                guard let engine = account.engine, let wake = account.nextWake else { continue }
                earliest = min(earliest, wake)
                if engine.hasPostedItems || wake <= clock.seconds() {
                    do {
                        try account.turn()
                    } catch {
                        throw SimulationError("\(account.name)'s engine stopped: \(error)")
                    }
                    turned = true
                }
            }
            if !turned { return earliest }
        }
        throw SimulationError("an engine keeps finding work at the same instant (1000 turns)")
    }

    /// Moves time on by `seconds` at once, as when every phone is off: timers that fall in
    /// between fire once, late (only the relay's run then, and they go by the clock).
    func jump(_ seconds: Double) throws {
        try runFor(5)
        scheduler.advance(to: clock.seconds() + seconds)
        try runFor(0.5)
    }
}

struct SimulationError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
