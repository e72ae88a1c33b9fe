import Foundation
import RChatCommandLine

/// One benchmark's command line, parsed against its declared options. An unknown option, a
/// missing value or one out of range is a one-line error and exit 2, not a silent default
/// (a typo would otherwise measure something else than asked).
struct BenchmarkCommand {
    let name: String
    let options: [Option]

    var usage: String { OptionHelp.usage("rchat-bench \(name)", optional: options) }

    /// The parsed options, or the process ends: exit 2 with one line on stderr.
    func parse(_ arguments: [String]) -> ParsedArguments {
        do {
            let parsed = try OptionParser(options, helpHint: "rchat-bench --help").parse(arguments)
            try parsed.expectPositionals(max: 0)
            return parsed
        } catch {
            FileHandle.standardError.write(Data("rchat-bench \(name): \(error.description)\n".utf8))
            exit(2)
        }
    }
}
