import Foundation
import XCTest
import RChatCore

/// What the network between clients and their relay sees, recorded by a proxy in front of a
/// real relay, with real `rchat sync` processes (steady traffic at its default, normal) and
/// a real `rchat check` behind it.
final class TrafficShapeTests: EngineTestCase {
    var proxy: RecordingProxy!

    override func tearDown() {
        proxy?.stop()
        super.tearDown()
    }

    /// Alice and Sam on the relay through the proxy, both running, a session between them.
    func pairThroughProxy() throws {
        proxy = try RecordingProxy(relayPort: world.relayPort)
        world.steadyTraffic = nil  // the product's default, normal: what this test is about
        let address = proxy.address(for: world.relayAddress)
        try world.makeAccount("alice", relay: address)
        try world.makeAccount("sam", relay: address)
        try world.add("alice", "sam")
        try world.add("sam", "alice")
        try world.startSync("sam")
        try world.startSync("alice")
    }

    func testEveryClientFrameIsAWireSizeAndAnIdleConversationLooksLikeAChattingOne() throws {
        try pairThroughProxy()
        let hello = try world.send("alice", to: "Sam", "hello")
        try world.waitForStatus("alice", "Sam", hello, "Delivered")
        let reply = try world.send("sam", to: "Alice", "hi there, all well?")
        try world.waitForStatus("sam", "Alice", reply, "Delivered")
        let chatted = proxy.frames.count
        // Idle for a while: dummies and cover keep both connections busy at the pace.
        var idleStart = 0.0
        try world.eventually("twenty frames from the clients while idle", timeout: 60) {
            let frames = proxy.frames
            if idleStart == 0 { idleStart = frames.last?.at ?? 0 }
            return frames[chatted...].filter(\.fromClient).count >= 20
        }
        let frames = proxy.frames
        let fromClients = frames.filter { $0.fromClient && $0.index > 0 }
        // Every client frame after the plaintext hello is a wire size (codes presented and
        // handshakes take 1 KiB).
        XCTAssertTrue(Set(fromClients.map(\.wireBytes)).isSubset(of: Padding.wireSizes), "\(fromClients.map(\.wireBytes))")
        // The relay's frames that carry payloads are wire sizes; the rest are small.
        for frame in frames where !frame.fromClient && frame.index > 0 {
            XCTAssertTrue(Padding.wireSizes.contains(frame.wireBytes) || frame.wireBytes < 100, "a relay frame of \(frame.wireBytes) B")
        }
        // Each client sends about one dummy per 2 s slot and one cover per 2 s on average (and
        // acknowledges what comes back): idle, each connection still carries frames.
        let idle = frames[chatted...].filter(\.fromClient)
        // Idle traffic (dummies, cover, acknowledgements, pings) is the size of the message and
        // receipts before it: the smallest.
        XCTAssertEqual(Set(idle.map(\.wireBytes)), [Padding.wireSizes[0]])
        let chat = frames[..<chatted].filter { $0.fromClient && $0.index > 0 && $0.wireBytes == Padding.wireSizes[0] }
        XCTAssertGreaterThanOrEqual(chat.count, 4, "the two messages and their receipts")
        XCTAssertEqual(Set(idle.map(\.connection)).count, 2, "both clients send while idle")
        XCTAssertEqual(try world.list("sam", "Alice").map(\.text), ["hello", "hi there, all well?"], "no dummy is stored")
        XCTAssertEqual(try world.list("alice", "Sam").map(\.text), ["hello", "hi there, all well?"], "no dummy is stored")
    }

    func testTheCheckSendsOnlyAnswersInWireSizes() throws {
        try pairThroughProxy()
        let first = try world.send("alice", to: "Sam", "first")
        try world.waitForStatus("alice", "Sam", first, "Delivered")
        world.stopSync("sam")
        let held = try world.send("alice", to: "Sam", "while you were away")
        try world.waitForStatus("alice", "Sam", held, "Sent")
        let before = Set(proxy.frames.map(\.connection))
        let run = try world.box.rchat("sam", ["check", "--print"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.lines, ["Alice\tNew message"])
        let frames = proxy.frames.filter { !before.contains($0.connection) && $0.connection != 0 }
        let connections = Set(frames.map(\.connection))
        XCTAssertEqual(connections.count, 1, "the check makes one connection")
        let fromCheck = frames.filter(\.fromClient)
        let deliveries = frames.filter { !$0.fromClient && Padding.wireSizes.contains($0.wireBytes) }.count
        // The hello, the authentication, then at most one acknowledgement per delivery:
        // nothing it sends is not an answer to the relay.
        XCTAssertGreaterThanOrEqual(deliveries, 1)
        XCTAssertLessThanOrEqual(fromCheck.count, 2 + deliveries, "\(fromCheck.map(\.wireBytes))")
        XCTAssertTrue(fromCheck.dropFirst().allSatisfy { Padding.wireSizes.contains($0.wireBytes) })
    }
}
