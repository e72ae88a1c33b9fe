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
case "files":
    FileBenchmark(arguments: Array(arguments.dropFirst())).run()
case "cluster":
    ClusterBenchmark(arguments: Array(arguments.dropFirst())).run()
case "tui":
    TUIBenchmark(arguments: Array(arguments.dropFirst())).run()
case "group":
    GroupBenchmark(arguments: Array(arguments.dropFirst())).run()
case "tui-child":
    TUIBenchmark.child(Array(arguments.dropFirst()))
default:
    let usage = [RelayBenchmark.command, EngineBenchmark.command, TUIBenchmark.command, CheckBenchmark.command, RequestBenchmark.command, FileBenchmark.command, ClusterBenchmark.command, GroupBenchmark.command]
        .map(\.usage).joined(separator: "\n")
    let help = arguments.first == "--help" || arguments.first == "-h"
    FileHandle(fileDescriptor: help ? 1 : 2).write(Data((usage + "\n").utf8))
    exit(help ? 0 : 2)
}
