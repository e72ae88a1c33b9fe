import Foundation
import Glibc
import RChatCore
import RChatNet
import XCTest

/// A round-robin TCP balancer on loopback, as an operator puts in front of the nodes: each
/// accepted connection goes to the next node, bytes copied both ways by two threads.
final class RoundRobinBalancer: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let backends: [UInt16]
    private let lock = NSLock()
    private var accepted = 0
    private var open: [Int32] = []

    init(to backends: [UInt16]) throws {
        self.backends = backends
        port = LoopbackPort.free()
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(listener, 64) == 0 else { throw ClusterFixture.Failure("balancer cannot listen on \(port)") }
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Connections sent to each node so far.
    var connections: Int { lock.withLock { accepted } }

    private static func loopback(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let backend = lock.withLock { () -> UInt16 in
                defer { accepted += 1 }
                return backends[accepted % backends.count]
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(backend)
            let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            guard connected == 0 else { close(client); close(server); continue }
            lock.withLock { open += [client, server] }
            Thread.detachNewThread { Self.copy(from: client, to: server) }
            Thread.detachNewThread { Self.copy(from: server, to: client) }
        }
    }

    private static func copy(from source: Int32, to target: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            var sent = 0
            while sent < n {
                let w = buffer.withUnsafeBytes { write(target, $0.baseAddress! + sent, n - sent) }
                guard w > 0 else { shutdown(source, Int32(SHUT_RDWR)); return }
                sent += w
            }
        }
        shutdown(target, Int32(SHUT_RDWR))
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        // Closing ends the copying threads' reads.
        for fd in lock.withLock({ open }) { shutdown(fd, Int32(SHUT_RDWR)) }
    }
}

/// Real engines (`rchat` processes) of two people whose relay ADDRESS is a balancer in
/// front of two nodes: the statuses the user sees, end to end.
final class ClusterEngineTests: XCTestCase {
    private var directory: URL!

    private var rchat: String {
        URL(fileURLWithPath: ClusterFixture.relayBinary).deletingLastPathComponent().appendingPathComponent("rchat").path
    }

    private func run(_ person: String, _ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: rchat)
        p.arguments = arguments + ["--home", directory.appendingPathComponent("\(person)-home").path,
                                   "--device-dir", directory.appendingPathComponent("\(person)-device").path]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw ClusterFixture.Failure("rchat \(arguments.joined(separator: " ")): \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The outgoing (or incoming) messages of `person`'s conversation with `name`: text → status.
    private func messages(_ person: String, _ name: String) throws -> [(text: String, direction: String, status: String?)] {
        try run(person, ["list", name, "--json"]).split(separator: "\n").compactMap { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["type"] as? String == "message" else { return nil }
            return (object["text"] as? String ?? "", object["direction"] as? String ?? "", object["status"] as? String)
        }
    }

    private func waitForStatus(_ person: String, _ name: String, _ text: String, _ status: String) throws {
        let seen = poll(timeout: 20) { () -> String? in
            let found = (try? messages(person, name))?.first { $0.text == text }?.status
            return found == status ? found : nil
        }
        XCTAssertEqual(seen, status, "\(person)'s \"\(text)\" to \(name)")
    }

    func testEnginesOnDifferentNodesSeeSentDeliveredAndRead() throws {
        let cluster = try ClusterFixture()
        let (_, first) = try cluster.startNode(firstServer: 0)
        let (_, second) = try cluster.startNode(firstServer: 1)
        let balancer = try RoundRobinBalancer(to: [first.port, second.port])
        directory = cluster.directory
        let address = RelayAddress(host: "127.0.0.1", port: balancer.port, publicKey: first.publicKey).description

        for (person, name) in [("alice", "Alice"), ("sam", "Sam")] {
            _ = try run(person, ["init", "--name", name, "--relay", address])
            _ = try run(person, ["settings", "receipt-window-ms", "0"])
        }
        _ = try run("alice", ["add", try run("sam", ["code"]).trimmingCharacters(in: .whitespacesAndNewlines)])
        _ = try run("sam", ["add", try run("alice", ["code"]).trimmingCharacters(in: .whitespacesAndNewlines)])

        // Sam's engine reaches the first node, Alice's the second.
        var engines: [Child] = []
        for (i, person) in ["sam", "alice"].enumerated() {
            let engine = Child(name: "\(person)-sync", executable: rchat,
                               arguments: ["sync", "--seconds", "120", "--home", directory.appendingPathComponent("\(person)-home").path,
                                           "--device-dir", directory.appendingPathComponent("\(person)-device").path],
                               directory: directory)
            try engine.start()
            engines.append(engine)
            XCTAssertNotNil(poll(timeout: 10) { balancer.connections > i ? true : nil }, "\(person)'s engine connected")
        }
        defer { for engine in engines { engine.stop() } }

        _ = try run("alice", ["send", "Sam", "hello across nodes"])
        try waitForStatus("alice", "Sam", "hello across nodes", "Delivered")
        _ = try run("sam", ["read", "Alice"])
        try waitForStatus("alice", "Sam", "hello across nodes", "Read")

        _ = try run("sam", ["send", "Alice", "and back"])
        try waitForStatus("sam", "Alice", "and back", "Delivered")
        let alices = try messages("alice", "Sam")
        XCTAssertEqual(alices.filter { $0.text == "and back" }.count, 1, "shown once")
        XCTAssertEqual(alices.filter { $0.text == "hello across nodes" }.count, 1)
        XCTAssertEqual(try messages("sam", "Alice").filter { $0.text == "hello across nodes" }.count, 1, "shown once")
    }
}
