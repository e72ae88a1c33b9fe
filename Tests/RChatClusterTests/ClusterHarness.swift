import Foundation
import Glibc
import RChatCore
import RChatCrypto
import RChatNet
import RChatRelayClient
import RChatWire
import XCTest

/// A child process of a test: its output in files under the test's folder, stopped by its PID.
final class Child {
    let name: String
    let executable: String
    let arguments: [String]
    let stdoutURL: URL
    let stderrURL: URL
    private(set) var process: Process?

    init(name: String, executable: String, arguments: [String], directory: URL) {
        self.name = name
        self.executable = executable
        self.arguments = arguments
        stdoutURL = directory.appendingPathComponent("\(name).out")
        stderrURL = directory.appendingPathComponent("\(name).err")
    }

    func start() throws {
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        p.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        p.standardError = try FileHandle(forWritingTo: stderrURL)
        try p.run()
        process = p
    }

    var stdout: String { (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }
    var isRunning: Bool { process?.isRunning == true }

    /// Its resident memory, from /proc.
    var residentBytes: Int? {
        guard let pid = process?.processIdentifier,
              let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        return kib * 1024
    }

    /// Stops it by its PID and waits for it, within a deadline (`waitUntilExit` once waited
    /// forever for a node that had exited by itself, keeping a test run and its NATS
    /// servers alive); nothing if it is not running.
    func stop(signal: Int32 = SIGTERM) {
        guard let p = process else { return }
        if p.isRunning { kill(p.processIdentifier, signal) }
        if poll(timeout: 10, { p.isRunning ? nil : true }) == nil {
            kill(p.processIdentifier, SIGKILL)
            _ = poll(timeout: 5) { p.isRunning ? nil : true }
        }
        process = nil
    }

    func send(_ signal: Int32) {
        if let p = process, p.isRunning { kill(p.processIdentifier, signal) }
    }

    /// Waits for it to exit by itself; its status, or nil after `timeout`.
    func exitStatus(timeout: Double) -> Int32? {
        guard let p = process else { return nil }
        guard poll(timeout: timeout, { p.isRunning ? nil : true }) != nil else { return nil }
        return p.terminationStatus
    }
}

/// Polls `body` until it gives a value or `timeout` passes.
func poll<T>(timeout: Double, interval: Double = 0.02, _ body: () -> T?) -> T? {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while Date() < deadline {
        if let value = body() { return value }
        Thread.sleep(until: min(deadline, Date(timeIntervalSinceNow: interval)))
    }
    return body()
}

/// A test's cluster: three `nats-server -js` processes routed to each other on loopback
/// (their JetStream stores in the test's folder), and relay nodes sharing one key file.
final class ClusterFixture {
    static let natsServer = ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    nonisolated(unsafe) private static var skipNoted = false

    /// Skips the test when `nats-server` is not installed (one line printed for the run).
    static func requireNatsServer() throws -> String {
        guard let path = natsServer else {
            if !skipNoted {
                skipNoted = true
                print("RChatClusterTests: nats-server is not installed; cluster tests skipped")
            }
            throw XCTSkip("nats-server is not installed")
        }
        return path
    }

    let directory: URL
    let keyFile: String
    let clientPorts: [UInt16]
    private(set) var servers: [Child] = []
    private(set) var nodes: [Child] = []
    private let natsServer: String

    init(servers count: Int = 3) throws {
        natsServer = try Self.requireNatsServer()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-cluster-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        keyFile = directory.appendingPathComponent("relay.key").path
        clientPorts = (0..<count).map { _ in LoopbackPort.free() }
        let routePorts = (0..<count).map { _ in LoopbackPort.free() }
        for i in 0..<count {
            var arguments = ["-js", "-a", "127.0.0.1", "-p", "\(clientPorts[i])", "-n", "nats-\(i)",
                             "-sd", directory.appendingPathComponent("store-\(i)").path]
            if count > 1 {
                arguments += ["--cluster_name", "rchat-test", "--cluster", "nats://127.0.0.1:\(routePorts[i])",
                              "--routes", routePorts.enumerated().filter { $0.offset != i }.map { "nats://127.0.0.1:\($0.element)" }.joined(separator: ",")]
            }
            servers.append(Child(name: "nats-\(i)", executable: natsServer, arguments: arguments, directory: directory))
        }
        for server in servers { try server.start() }
        for i in servers.indices { try waitUntilReady(i) }
        if count > 1 { try waitForMetadataLeader() }
    }

    /// Until the servers met as JetStream peers and elected a metadata leader: a node started
    /// before that waits (`ClusterLink`, 15 s) for a stream of three replicas that has nowhere
    /// to go yet ("no suitable peers for placement"), and under make test's load the meeting
    /// once took longer than that wait.
    func waitForMetadataLeader() throws {
        let elected = poll(timeout: 30) {
            servers.contains { $0.stderr.contains("new metadata leader") || $0.stderr.contains("new JetStream cluster metadata leader") } ? true : nil
        }
        guard elected != nil else { throw Failure("the NATS servers elected no JetStream metadata leader: \(servers[0].stderr.suffix(500))") }
    }

    /// Until server `i` says it is ready. 30 s: under make test's load (two test processes on
    /// two cores) one of three clustered servers once took longer than 10 s past its
    /// JetStream store line.
    func waitUntilReady(_ i: Int) throws {
        guard poll(timeout: 30, { servers[i].stderr.contains("Server is ready") ? true : nil }) != nil else {
            throw Failure("nats-\(i) did not start: \(servers[i].stderr.suffix(500))")
        }
    }

    /// Server `i` started again (after a stop or a kill) on its port and store, once it is
    /// ready: what follows is timed from a server that is up, not from one still recovering
    /// its JetStream store.
    func restartServer(_ i: Int) throws {
        try servers[i].start()
        try waitUntilReady(i)
    }

    struct Failure: Error, CustomStringConvertible { let description: String; init(_ d: String) { description = d } }

    /// The servers' URLs, `first` first (a node connects to the first it reaches).
    func urls(from first: Int) -> String {
        (0..<clientPorts.count).map { "nats://127.0.0.1:\(clientPorts[(first + $0) % clientPorts.count])" }.joined(separator: ",")
    }

    /// Starts a relay node and waits for its address (a node started before JetStream
    /// elected its leaders waits for them).
    func startNode(_ extra: [String] = [], firstServer: Int = 0) throws -> (Child, RelayAddress) {
        let child = Child(name: "node-\(nodes.count)", executable: Self.relayBinary,
                          arguments: ["--listen", "127.0.0.1:0", "--key-file", keyFile, "--cluster", urls(from: firstServer)] + extra,
                          directory: directory)
        nodes.append(child)
        try child.start()
        let line = poll(timeout: 20) { () -> String? in
            if let first = child.stdout.split(separator: "\n").first, child.stdout.hasSuffix("\n") { return String(first) }
            return child.isRunning ? nil : ""
        }
        guard let line, line.hasPrefix("relay ") else { throw Failure("the relay node did not start: \(child.stderr)") }
        return (child, try RelayAddress(parsing: String(line.dropFirst("relay ".count))))
    }

    /// The built `rchat-relay` beside the test bundle, else the package's .build/debug.
    static var relayBinary: String {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("rchat-relay").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/rchat-relay").path
    }

    deinit {
        if ProcessInfo.processInfo.environment["RCHAT_CLUSTER_LOGS"] != nil {
            for node in nodes { print("\(node.name):\n\(node.stderr)") }
        }
        for node in nodes { node.stop(signal: SIGKILL) }
        for server in servers { server.stop(signal: SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The usual fixture: a cluster, two nodes, alice on the first and bob on the second
/// (both handed their empty mailboxes).
struct TwoNodes {
    let cluster: ClusterFixture
    let first: (node: Child, address: RelayAddress)
    let second: (node: Child, address: RelayAddress)
    let alice: Member, bob: Member

    init(_ extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws {
        cluster = try ClusterFixture()
        // Each node connects to a different server first.
        first = try cluster.startNode(extra, firstServer: 0)
        second = try cluster.startNode(extra, firstServer: 1)
        alice = try Member(first.address)
        bob = try Member(second.address)
        XCTAssertEqual(alice.next(), .drained, file: file, line: line)
        XCTAssertEqual(bob.next(), .drained, file: file, line: line)
    }
}

/// A client of the cluster with the events it has not consumed yet.
final class Member {
    let key: SigningKey
    private(set) var client: RelayClient
    /// `host`: the loopback address it connects from (127.0.0.1 when nil).
    init(_ address: RelayAddress, key: SigningKey = .generate(), from host: String? = nil) throws {
        self.key = key
        client = try RelayClient.connect(to: address, mailboxKey: key, from: host)
    }

    func reconnect(to address: RelayAddress) throws {
        client.close()
        client = try RelayClient.connect(to: address, mailboxKey: key)
    }

    /// The next event other than a pong, within `timeout`.
    func next(timeout: Double = 10) -> RelayEvent? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while let event = client.nextEvent(timeout: max(0, deadline.timeIntervalSinceNow)) {
            if case .pong = event { continue }
            return event
        }
        return nil
    }
}

extension Member {
    /// Alice and bob linked, then bob gone: what alice sends is held for him.
    /// Alice's end of the link, and its code.
    static func linkedThenOffline(_ fixture: TwoNodes, file: StaticString = #filePath, line: UInt = #line) throws -> (LinkID, [UInt8]) {
        let (la, _, code) = try link(fixture.alice, fixture.bob, file: file, line: line)
        fixture.bob.client.close()
        XCTAssertEqual(fixture.alice.next(), .peerGone(link: la), "bob's node tells alice's that he left", file: file, line: line)
        return (la, code)
    }

    /// Sends `count` payloads on `link` as an engine does (never more queued than the
    /// client's room) and waits until the relay took them all; how many it took.
    func sendAll(_ count: Int, on link: LinkID, _ payload: (Int) -> [UInt8]) throws -> Int {
        var taken = 0
        for i in 0..<count {
            while !client.hasRoom(), case .sent? = next() { taken += 1 }
            _ = try client.send(on: link, payload(i), flush: false)
            while case .sent? = client.nextEvent(timeout: 0) { taken += 1 }
        }
        try client.flush()
        while taken < count, case .sent? = next() { taken += 1 }
        return taken
    }
}

/// Links two members (on any nodes) with a fresh code; their link numbers.
func link(_ a: Member, _ b: Member, file: StaticString = #filePath, line: UInt = #line) throws -> (LinkID, LinkID, [UInt8]) {
    let code = Random.bytes(32)
    try a.client.present([code])
    try b.client.present([Random.bytes(32), code])
    guard case .linked(let la, let ca)? = a.next(), case .linked(let lb, let cb)? = b.next() else {
        XCTFail("not linked", file: file, line: line)
        throw RelayClientError.closed
    }
    XCTAssertEqual(ca, code, file: file, line: line)
    XCTAssertEqual(cb, code, file: file, line: line)
    return (la, lb, code)
}
