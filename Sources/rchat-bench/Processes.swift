import Foundation
import Glibc
import RChatNet
import Synchronization

/// A child process whose stdout is read line by line.
final class Child {
    let process = Process()
    private let out = Pipe()
    private var buffer = Data()

    init(_ path: String, _ arguments: [String], quietStderr: Bool = true) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = quietStderr ? FileHandle.nullDevice : FileHandle.standardError
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// The next line of stdout, nil at end of stream.
    func readLine() -> String? {
        while true {
            if let nl = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...nl)
                return line
            }
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }

    /// The first line starting with `prefix`.
    func line(startingWith prefix: String) -> String? {
        while let l = readLine() { if l.hasPrefix(prefix) { return l } }
        return nil
    }

    func stop() {
        if process.isRunning { kill(pid, SIGTERM); process.waitUntilExit() }
    }
}

/// Resident memory of a process, bytes (VmRSS).
func residentBytes(_ pid: Int32) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let kb = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) } ?? 0
        return kb * 1024
    }
    return 0
}

/// A TCP port nobody is listening on right now.
func freePort() -> UInt16 { LoopbackPort.free() }

func which(_ name: String) -> String? {
    // Strings, not the split's substrings: with those, `+ ["/usr/sbin"]` made an array of
    // character arrays and every directory but /usr/sbin was spelled wrong.
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/usr/sbin").split(separator: ":").map(String.init) + ["/usr/sbin"] {
        let p = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: p) { return p }
    }
    return nil
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

/// Ends a benchmark that cannot go on: one line on stderr, exit 1, after stopping the
/// processes it started (`startedChildren`, by PID) and removing its directory.
func benchmarkFailure(_ benchmark: String, _ message: String) -> Never {
    FileHandle.standardError.write(Data("rchat-bench \(benchmark): \(message)\n".utf8))
    let (pids, directory) = startedChildren.withLock { ($0.pids, $0.directory) }
    for pid in pids { kill(pid, SIGTERM) }
    if let directory { try? FileManager.default.removeItem(atPath: directory) }
    exit(1)
}

/// What `benchmarkFailure` cleans up.
let startedChildren = Mutex<(pids: [Int32], directory: String?)>(([], nil))
