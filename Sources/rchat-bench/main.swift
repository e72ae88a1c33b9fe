import Foundation

// rchat-bench: benchmarks, separate from tests; each prints its figures beside a reference
// measured in the same run, and the ratio.
let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "relay":
    RelayBenchmark(arguments: Array(arguments.dropFirst())).run()
case "engine":
    EngineBenchmark(arguments: Array(arguments.dropFirst())).run()
case "check":
    CheckBenchmark(arguments: Array(arguments.dropFirst())).run()
case "requests":
    RequestBenchmark(arguments: Array(arguments.dropFirst())).run()
case "tui":
    TUIBenchmark(arguments: Array(arguments.dropFirst())).run()
case "tui-child":
    TUIBenchmark.child(Array(arguments.dropFirst()))
default:
    FileHandle.standardError.write(Data("usage: rchat-bench relay [--frames N] [--paced N] [--held N]\n       rchat-bench engine [--messages N] [--paced N] [--interval-ms MS] [--reference-rows N] [--verbose] [--store-only]\n       rchat-bench tui [--messages N] [--big N]\n       rchat-bench check [--messages N] [--runs N]\n       rchat-bench requests [--stored N] [--measured N]\n".utf8))
    exit(2)
}
