import Foundation

/// One benchmark's command line: `--name VALUE` options and bare flags. An unknown option,
/// a missing value or one out of range is a one-line error and exit 2, not a silent default
/// (a typo would otherwise measure something else than asked).
struct BenchmarkOptions {
    private var values: [String: String] = [:]
    private var flags: Set<String> = []
    private let command: String

    /// `options`: the names that take a value; `flags`: the bare ones.
    init(_ arguments: [String], command: String, options: Set<String>, flags known: Set<String> = []) {
        self.command = command
        var i = 0
        while i < arguments.count {
            let name = arguments[i]
            if known.contains(name) {
                flags.insert(name)
            } else if options.contains(name) {
                guard i + 1 < arguments.count else { fail("\(name) needs a value") }
                values[name] = arguments[i + 1]
                i += 1
            } else {
                fail("unknown option \(name)")
            }
            i += 1
        }
    }

    func int(_ name: String, default value: Int, in range: ClosedRange<Int>) -> Int {
        guard let text = values[name] else { return value }
        guard let n = Int(text), range.contains(n) else { fail("\(name) takes a whole number from \(range.lowerBound) to \(range.upperBound)") }
        return n
    }

    func double(_ name: String, default value: Double, in range: ClosedRange<Double>) -> Double {
        guard let text = values[name] else { return value }
        guard let n = Double(text), range.contains(n) else { fail("\(name) takes a number from \(range.lowerBound) to \(range.upperBound)") }
        return n
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }

    private func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("rchat-bench \(command): \(message)\n".utf8))
        exit(2)
    }
}
