import Foundation
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
        public init() {}
    }

    public static let usage = """
        usage: rchat-simulate [--seeds N] [--first SEED] [--steps N] [--jobs N]
               rchat-simulate --seed SEED [--steps N] [--trace-lines N]
        """

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
            FileHandle.standardError.write(Data("rchat-simulate: \(error)\n\(usage)\n".utf8))
            exit(2)
        }
        if let seed = settings.replay {
            var options = SimulatedWorld.Options()
            options.steps = settings.steps
            options.traceLines = settings.traceLines
            let outcome = SimulatedWorld.run(seed: seed, options: options)
            for line in outcome.tail { print(line) }
            if !outcome.passed { print(report(outcome)) }
            print(summary([outcome], seconds: nil))
            exit(outcome.passed ? 0 : 1)
        }
        let started = Date()
        let outcomes = runMany(settings)
        let seconds = Date().timeIntervalSince(started)
        for outcome in outcomes where !outcome.passed { print(report(outcome)) }
        print(summary(outcomes, seconds: seconds))
        exit(outcomes.allSatisfy(\.passed) ? 0 : 1)
    }

    struct UsageError: Error, CustomStringConvertible { let description: String }

    static func parse(_ arguments: [String]) throws -> Settings {
        var settings = Settings()
        var rest = arguments[...]
        func number(_ option: String) throws -> UInt64 {
            guard let text = rest.popFirst(), let value = UInt64(text) else { throw UsageError(description: "\(option) needs a number") }
            return value
        }
        while let option = rest.popFirst() {
            switch option {
            case "--seeds": settings.seeds = Int(try number(option))
            case "--first": settings.first = try number(option)
            case "--steps": settings.steps = Int(try number(option))
            case "--jobs": settings.jobs = max(1, Int(try number(option)))
            case "--seed": settings.replay = try number(option)
            case "--trace-lines": settings.traceLines = Int(try number(option))
            default: throw UsageError(description: "unknown option \(option)")
            }
        }
        return settings
    }

    /// Runs `settings.seeds` seeds from `settings.first` on `settings.jobs` threads.
    public static func runMany(_ settings: Settings) -> [SimulatedWorld.Outcome] {
        let next = Atomic<UInt64>(0)
        let results = Mutex<[SimulatedWorld.Outcome]>([])
        let group = DispatchGroup()
        for _ in 0..<settings.jobs {
            group.enter()
            let thread = Thread {
                var options = SimulatedWorld.Options()
                options.steps = settings.steps
                while true {
                    let n = next.add(1, ordering: .relaxed).oldValue
                    guard n < UInt64(settings.seeds) else { break }
                    let outcome = SimulatedWorld.run(seed: settings.first + n, options: options)
                    results.withLock { $0.append(outcome) }
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
    public static func report(_ outcome: SimulatedWorld.Outcome) -> String {
        """
        seed \(outcome.seed) failed after \(outcome.steps) steps: \(outcome.failures.first ?? "")\(outcome.failures.count > 1 ? " (and \(outcome.failures.count - 1) more)" : "")
          replay: make simulate SEED=\(outcome.seed)
        """
    }

    public static func summary(_ outcomes: [SimulatedWorld.Outcome], seconds: Double?) -> String {
        let failures = outcomes.filter { !$0.passed }.count
        let steps = outcomes.reduce(0) { $0 + $1.steps }
        var line = "\(outcomes.count) seeds, \(failures) failures"
        if let seconds, seconds > 0 {
            line += String(format: "; %d steps in %.1f s (%.0f steps/s, %.0f seeds/min)", steps, seconds,
                           Double(steps) / seconds, Double(outcomes.count) / seconds * 60)
        }
        return line
    }
}
