import Foundation
import XCTest

/// A failing disk for one directory: Tests/FaultShim/fault_shim.c, built once per test run
/// with `cc`, preloaded into a real `rchat` or `rchat-relay` process. It fails write,
/// pwrite, fsync, fdatasync, ftruncate, rename and open (those that could write) of the files
/// under `directory` with ENOSPC or EIO, at the calls a seed picks; nothing else in the
/// process (its sockets, its stderr) is touched. The disk fails while the switch file exists:
/// `heal()` gives it back without restarting anything.
struct FailingDisk {
    enum Failure: String { case noSpace = "ENOSPC", io = "EIO", mixed = "MIX" }

    let directory: String
    let seed: UInt64
    /// Failing calls in 1,000 of the eligible ones (1000: every one).
    var perMille = 1000
    /// The first `after` eligible calls succeed.
    var after = 0
    var failure = Failure.mixed
    /// A comma list of write, fsync, rename, open, truncate (nil: all).
    var calls: String?
    /// Where the switch and the log live (outside `directory`).
    let controls: String

    init(directory: String, seed: UInt64, controls: String) {
        self.directory = directory
        self.seed = seed
        self.controls = controls
        FileManager.default.createFile(atPath: switchPath, contents: nil)
    }

    var switchPath: String { "\(controls)/fault-switch-\(seed)" }
    var logPath: String { "\(controls)/fault-log-\(seed)" }

    var environment: [String: String] {
        var environment = ["LD_PRELOAD": Self.library, "RCHAT_FAULT_UNDER": directory, "RCHAT_FAULT_SWITCH": switchPath,
                           "RCHAT_FAULT_LOG": logPath, "RCHAT_FAULT_SEED": String(seed), "RCHAT_FAULT_PER_MILLE": String(perMille),
                           "RCHAT_FAULT_AFTER": String(after), "RCHAT_FAULT_ERRNO": failure.rawValue]
        environment["RCHAT_FAULT_CALLS"] = calls
        return environment
    }

    /// The disk works again (for every process that has it, at once).
    func heal() { try? FileManager.default.removeItem(atPath: switchPath) }
    /// The disk fails again.
    func fail() { FileManager.default.createFile(atPath: switchPath, contents: nil) }

    private var logLines: [String] {
        ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Every failure injected so far, one line each: "CALL ERRNO PATH".
    var injected: [String] { logLines.filter { !$0.hasPrefix("calls ") } }

    /// The eligible calls of each process that exited normally.
    var callCounts: [Int] { logLines.compactMap { $0.hasPrefix("calls ") ? Int($0.dropFirst(6)) : nil } }

    /// The preload library, built from Tests/FaultShim/fault_shim.c into a temporary folder
    /// by the C compiler of the Swift toolchain (clang; cc where there is none).
    static let library: String = {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FaultShim/fault_shim.c").path
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-fault-shim-\(getpid()).so").path
        let cc = Process()
        cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let compiler = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
            .contains { FileManager.default.isExecutableFile(atPath: "\($0)/clang") } ? "clang" : "cc"
        cc.arguments = [compiler, "-shared", "-fPIC", "-O1", "-o", output, source, "-ldl"]
        do { try cc.run() } catch { fatalError("cannot run cc to build \(source): \(error)") }
        cc.waitUntilExit()
        precondition(cc.terminationStatus == 0, "cc could not build \(source)")
        return output
    }()
}

/// A real full file system: a tmpfs of `megabytes` mounted at `path` (root only: the tests
/// skip otherwise), unmounted by its path in `unmount()`.
final class SmallFileSystem {
    let path: String
    private(set) var mounted = false

    init(at path: String, megabytes: Int) throws {
        guard getuid() == 0 else { throw XCTSkip("a real full file system needs root to mount a tmpfs (these tests run as root in CI)") }
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try mount(["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0700", "tmpfs", path])
        mounted = true
    }

    /// Space freed: the same file system, bigger (what is on it stays).
    func grow(to megabytes: Int) throws { try mount(["-o", "remount,size=\(megabytes)m", path]) }

    func unmount() {
        guard mounted else { return }
        mounted = false
        try? mount(["-l", path], program: "/usr/bin/umount")
    }

    deinit { unmount() }

    private func mount(_ arguments: [String], program: String = "/usr/bin/mount") throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = arguments
        let err = Pipe()
        p.standardError = err
        try p.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw XCTSkip("\(program) \(arguments.joined(separator: " ")) failed: \(message)") }
    }
}
