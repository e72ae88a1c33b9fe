import Foundation
import Glibc
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
import XCTest

/// `make cluster-demo`'s script, run for real: three nats-servers, two relay nodes and
/// haproxy from the operator's files in Deploy/. Clients reach the nodes only through the
/// ADDRESS it prints, and Ctrl-C stops everything it started.
final class ClusterDemoTests: XCTestCase {
    nonisolated(unsafe) private static var skipNoted = false

    func testClientsThroughTheBalancerLinkAndAreHandedWhatWasHeldAndCtrlCStopsItAll() throws {
        _ = try ClusterFixture.requireNatsServer()
        guard ["/usr/sbin/haproxy", "/usr/bin/haproxy"].contains(where: FileManager.default.isExecutableFile(atPath:)) else {
            if !Self.skipNoted {
                Self.skipNoted = true
                print("ClusterDemoTests: haproxy is not installed; the cluster demo's test skipped")
            }
            throw XCTSkip("haproxy is not installed")
        }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-cluster-demo-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let demo = Child(name: "cluster-demo", executable: package.appendingPathComponent("Deploy/cluster-demo.sh").path,
                         arguments: [ClusterFixture.relayBinary], directory: directory)
        try demo.start()
        defer { demo.stop() }

        // One line on stdout, the relay's own form of an ADDRESS, pointing at the balancer.
        let printed = poll(timeout: 60) { () -> String? in
            demo.stdout.hasSuffix("\n") ? demo.stdout : (demo.isRunning ? nil : "")
        }
        guard let printed, printed.hasPrefix("relay ") else { return XCTFail("no ADDRESS: \(demo.stderr)") }
        XCTAssertEqual(printed.split(separator: "\n").count, 1, "stdout is the ADDRESS line alone")
        let address = try RelayAddress(parsing: String(printed.dropFirst("relay ".count).dropLast()))
        let said = demo.stderr
        XCTAssertTrue(said.contains("haproxy (round robin) on 127.0.0.1:\(address.port)"), "the ADDRESS is the balancer's: \(said)")
        let folder = said.components(separatedBy: "files in ").dropFirst().first?.split(separator: "\n").first.map(String.init) ?? ""
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder), "the demo's folder: \(said)")

        // Its children: three nats-servers, two relay nodes, haproxy.
        let pid = try XCTUnwrap(demo.process?.processIdentifier)
        let children = ((try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? "")
            .split(separator: " ").compactMap { Int32($0) }
        let names = children.map { ((try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines) }
        XCTAssertEqual(names.sorted(), ["haproxy", "nats-server", "nats-server", "nats-server", "rchat-relay", "rchat-relay"])

        // Two clients through the balancer (round robin: one on each node) link and forward.
        let alice = try Member(address), bob = try Member(address)
        XCTAssertEqual(alice.next(), .drained)
        XCTAssertEqual(bob.next(), .drained)
        let (la, _, _) = try link(alice, bob)
        let live = try alice.client.send(on: la, Array("through the balancer".utf8))
        XCTAssertEqual(alice.next(), .sent(seq: live, forwarded: true))
        guard case .delivery(let first)? = bob.next() else { return XCTFail("bob got nothing") }
        XCTAssertEqual(first.payload, Array("through the balancer".utf8))
        try bob.client.acknowledge([first.id])

        // Bob offline: what alice sends is held in JetStream, and handed to him when he
        // comes back through the balancer, once.
        bob.client.close()
        XCTAssertEqual(alice.next(), .peerGone(link: la))
        let held = try alice.client.send(on: la, Array("held for bob".utf8))
        XCTAssertEqual(alice.next(), .sent(seq: held, forwarded: false))
        // (Deleting what he acknowledged is asynchronous: a connection made at once may still
        // be handed it.)
        XCTAssertNotNil(poll(timeout: 5) { () -> Bool? in
            try? bob.reconnect(to: address)
            return bob.client.heldAtConnect == 1 ? true : nil
        }, "held: only what was sent while he was away")
        guard case .delivery(let second)? = bob.next() else { return XCTFail("bob was not handed what was held") }
        XCTAssertEqual(second.payload, Array("held for bob".utf8))
        try bob.client.acknowledge([second.id])
        XCTAssertEqual(bob.next(), .drained, "once it is acknowledged")
        alice.client.close()
        bob.client.close()

        // Ctrl-C: the script stops (130), every process it started is gone, and its folder.
        kill(pid, SIGINT)
        XCTAssertEqual(demo.exitStatus(timeout: 30), 130)
        for (child, name) in zip(children, names) {
            XCTAssertFalse(FileManager.default.fileExists(atPath: "/proc/\(child)"), "\(name) (PID \(child)) still runs")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder), "the demo's folder is removed")
    }
}
