import Foundation
import RChatCommandLine
import Synchronization

/// `rchat-simulate` (and `make simulate`): runs seeds and prints `N seeds, F failures` with
/// the steps per second; a failure prints its seed, what broke, and the command that
/// replays it.
public enum SimulateCommand {
    public struct Settings: Sendable {
        public var first: UInt64 = 1
        public var seeds = 100
        public var steps = 200
        public var jobs = 2
        /// One seed, with the end of its trace.
        public var replay: UInt64?
        /// Lines of a replayed seed's trace printed (its end).
        public var traceLines = 400
        /// A long run: seeds from `first` on until this many hours have passed (`seeds` is
        /// then ignored); each failing seed is printed as it fails.
        public var hours: Double?
        /// The group mode (`SimulatedWorld.Options.groups`).
        public var groups = false
        /// `SimulatedWorld.Options.rotations`.
        public var rotations = false
        public init() {}
    }

    static let seeds = Declared<Int>.integer("--seeds", in: 1...100_000_000, default: 100, help: "how many seeds to run")
    static let first = Declared<Int>.integer("--first", "SEED", in: 0...Int.max, default: 1, help: "the first seed")
    static let steps = Declared<Int>.integer("--steps", in: 1...1_000_000, default: 200, help: "steps per seed")
    static let jobs = Declared<Int>.integer("--jobs", in: 1...64, default: 2, help: "threads running seeds")
    static let seed = Declared<Int>.integer("--seed", "SEED", in: 0...Int.max, default: 0,
                                            help: "replay this one seed and print the end of its trace")
    static let traceLines = Declared<Int>.integer("--trace-lines", in: 1...100_000_000, default: 400,
                                                  help: "lines of a replayed seed's trace printed")
    static let hours = Declared<Int>.integer("--hours", in: 1...10_000, default: 1,
                                             help: "run seeds until this many hours have passed (instead of --seeds)")
    static let groups = Option.flag("--groups", help: "3 to 5 accounts in one group, its members writing, changing and recovering")
    static let rotations = Option.flag("--rotations", help: "with --groups: members rotate their keys too")
    static let help = Option.flag("--help", aliases: ["-h"], help: "this text")
    static let options = [seeds.option, first.option, steps.option, jobs.option, seed.option, traceLines.option, hours.option, groups, rotations, help]

    public static var usage: String {
        OptionHelp.usage("rchat-simulate", optional: options) + "\n" + OptionHelp.list(options)
    }

    public static func main(_ arguments: [String], environment: [String: String]) -> Never {
        // Swift seeds its hashing per process; a replay must iterate dictionaries as the run did.
        if environment["SWIFT_DETERMINISTIC_HASHING"] == nil {
            setenv("SWIFT_DETERMINISTIC_HASHING", "1", 1)
            let path = "/proc/self/exe"
            let argv = arguments.map { strdup($0) } + [nil]
            execv(path, argv)
            FileHandle.standardError.write(Data("rchat-simulate: cannot restart with deterministic hashing\n".utf8))
            exit(1)
        }
        let settings: Settings
        do { settings = try parse(Array(arguments.dropFirst())) } catch {
            FileHandle.standardError.write(Data("rchat-simulate: \(error.description)\n".utf8))
            exit(2)
        }
        if let seed = settings.replay {
            var options = SimulatedWorld.Options()
            options.steps = settings.steps
            options.traceLines = settings.traceLines
            options.groups = settings.groups
            options.rotations = settings.rotations
            let outcome = SimulatedWorld.run(seed: seed, options: options)
            if !outcome.passed, settings.groups { print("(the group mode: make simulate SEED=\(seed) GROUPS=1)") }
            for line in outcome.tail { print(line) }
            if !outcome.passed { print(report(outcome)) }
            print(summary([outcome], seconds: nil))
            exit(outcome.passed ? 0 : 1)
        }
        let started = Date()
        let outcomes = runMany(settings)
        let seconds = Date().timeIntervalSince(started)
        for outcome in outcomes where !outcome.passed { print(report(outcome, groups: settings.groups)) }
        print(summary(outcomes, seconds: seconds))
        exit(outcomes.allSatisfy(\.passed) ? 0 : 1)
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> Settings {
        let parsed = try OptionParser(options, helpHint: "rchat-simulate --help").parse(arguments)
        try parsed.expectPositionals(max: 0)
        if parsed.has(help) {
            print(usage)
            exit(0)
        }
        var settings = Settings()
        settings.seeds = parsed[seeds]
        settings.first = UInt64(parsed[first])
        settings.steps = parsed[steps]
        settings.jobs = parsed[jobs]
        settings.traceLines = parsed[traceLines]
        if parsed.value(seed.option.name) != nil { settings.replay = UInt64(parsed[seed]) }
        if parsed.value(hours.option.name) != nil { settings.hours = Double(parsed[hours]) }
        settings.groups = parsed.has(groups)
        settings.rotations = parsed.has(rotations)
        return settings
    }

    /// Runs `settings.seeds` seeds from `settings.first` on `settings.jobs` threads.
    public static func runMany(_ settings: Settings) -> [SimulatedWorld.Outcome] {
        let next = Atomic<UInt64>(0)
        let results = Mutex<[SimulatedWorld.Outcome]>([])
        let group = DispatchGroup()
        let deadline = settings.hours.map { Date().addingTimeInterval($0 * 3600) }
        for _ in 0..<settings.jobs {
            group.enter()
            let thread = Thread {
                var options = SimulatedWorld.Options()
                options.steps = settings.steps
                options.groups = settings.groups
                options.rotations = settings.rotations
                while true {
                    let n = next.add(1, ordering: .relaxed).oldValue
                    if let deadline { guard Date() < deadline else { break } } else { guard n < UInt64(settings.seeds) else { break } }
                    let outcome = SimulatedWorld.run(seed: settings.first + n, options: options)
                    if deadline != nil && !outcome.passed { print(report(outcome, groups: settings.groups)) }
                    // A long run keeps only what the summary and the failures need.
                    results.withLock { $0.append(deadline == nil || !outcome.passed ? outcome : outcome.summarized) }
                }
                group.leave()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        group.wait()
        return results.withLock { $0 }.sorted { $0.seed < $1.seed }
    }

    /// What a failed seed prints: the seed, what broke, the command that replays it.
    public static func report(_ outcome: SimulatedWorld.Outcome, groups: Bool = false) -> String {
        """
        seed \(outcome.seed) failed after \(outcome.steps) steps: \(outcome.failures.first ?? "")\(outcome.failures.count > 1 ? " (and \(outcome.failures.count - 1) more)" : "")
          replay: make simulate SEED=\(outcome.seed)\(groups ? " GROUPS=1" : "")
        """
    }

    public static func summary(_ outcomes: [SimulatedWorld.Outcome], seconds: Double?) -> String {
        let failures = outcomes.filter { !$0.passed }.count
        let steps = outcomes.reduce(0) { $0 + $1.steps }
        var line = "\(outcomes.count) seeds, \(failures) failures, \(outcomes.reduce(0) { $0 + $1.powerCuts }) power cuts ("
            + "\(outcomes.reduce(0) { $0 + $1.powerCutsLosingData }) on data not synced)"
        if let seconds, seconds > 0 {
            line += String(format: "; %d steps in %.1f s (%.0f steps/s, %.0f seeds/min)", steps, seconds,
                           Double(steps) / seconds, Double(outcomes.count) / seconds * 60)
        }
        return line
    }
}
