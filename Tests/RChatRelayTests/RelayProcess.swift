import Foundation
import RChatCore
import XCTest

/// A real `rchat-relay` process for a test: started on 127.0.0.1 port 0, its `relay ADDRESS`
/// line read from stdout, its stderr kept in a file, stopped by its PID.
final class RelayProcess {
    let directory: URL
    let keyFile: String
    private(set) var process: Process?
    private(set) var address: RelayAddress!
    private var stderrURL: URL
    private var stdoutURL: URL

    /// The built binary: beside the test bundle (whatever the build directory is called),
    /// else the package's default .build/debug.
    static var binary: String {
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        // Either .../debug/xyz.xctest (an executable on Linux) or a bundle directory inside it.
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("rchat-relay").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return package.appendingPathComponent(".build/debug/rchat-relay").path
    }

    init() {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-relay-test-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        keyFile = directory.appendingPathComponent("relay.key").path
        stderrURL = directory.appendingPathComponent("stderr-0.log")
        stdoutURL = directory.appendingPathComponent("stdout-0.log")
    }

    var persistPath: String { directory.appendingPathComponent("held.sqlite").path }
    private var runs = 0

    /// Starts the relay with extra arguments; waits for its address line.
    @discardableResult
    func start(_ arguments: [String] = [], fakeNow: Int64? = nil, samePort: Bool = false, file: StaticString = #filePath, line: UInt = #line) throws -> RelayAddress {
        runs += 1
        stderrURL = directory.appendingPathComponent("stderr-\(runs).log")
        stdoutURL = directory.appendingPathComponent("stdout-\(runs).log")
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = ["--listen", "127.0.0.1:\(samePort ? address.port : 0)", "--key-file", keyFile] + arguments
        var env = ProcessInfo.processInfo.environment
        env["RCHAT_FAKE_NOW"] = fakeNow.map(String.init)
        p.environment = env
        p.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        p.standardError = try FileHandle(forWritingTo: stderrURL)
        try p.run()
        process = p
        let text = try XCTUnwrap(waitFor(timeout: 10) { () -> String? in
            let out = (try? String(contentsOf: self.stdoutURL, encoding: .utf8)) ?? ""
            return out.hasSuffix("\n") ? out : nil
        }, "relay printed no address; stderr: \(stderr)", file: file, line: line)
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "exactly one line on stdout", file: file, line: line)
        XCTAssertTrue(lines[0].hasPrefix("relay "), file: file, line: line)
        address = try RelayAddress(parsing: String(lines[0].dropFirst("relay ".count)))
        return address
    }

    var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

    func stop(signal: Int32 = SIGTERM) {
        guard let p = process, p.isRunning else { process = nil; return }
        kill(p.processIdentifier, signal)
        p.waitUntilExit()
        process = nil
    }

    var pid: Int32? { process?.processIdentifier }

    deinit {
        stop(signal: SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Polls `body` until it returns non-nil or the deadline passes.
func waitFor<T>(timeout: Double, interval: Double = 0.01, _ body: () -> T?) -> T? {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while Date() < deadline {
        if let v = body() { return v }
        Thread.sleep(until: min(deadline, Date(timeIntervalSinceNow: interval)))
    }
    return body()
}
