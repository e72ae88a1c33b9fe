import Foundation
import RChatCore
import RChatCrypto
import RChatNet
import RChatRelayClient
import RChatWire
import XCTest

/// Two relay nodes over three NATS servers: a conversation between clients on different
/// nodes, held frames handed over on another node, the quota, and the start-up failure.
final class ClusterRelayTests: XCTestCase {
    func testConversationAcrossNodesBothWaysWithReceipts() throws {
        let fixture = try TwoNodes()
        let alice = fixture.alice, bob = fixture.bob
        let (la, lb, code) = try link(alice, bob)

        var seqs: [UInt64] = []
        for i in 0..<3 { seqs.append(try alice.client.send(on: la, Array("hello \(i)".utf8))) }
        for seq in seqs { XCTAssertEqual(alice.next(), .sent(seq: seq, forwarded: true)) }
        var ids: [HeldItemID] = []
        for i in 0..<3 {
            guard case .delivery(let d)? = bob.next() else { return XCTFail("bob got no delivery \(i)") }
            XCTAssertEqual(d.payload, Array("hello \(i)".utf8), "in order")
            XCTAssertEqual(d.link, lb, "labelled with bob's end of the link")
            XCTAssertEqual(d.origin, .link(code: code))
            ids.append(d.id)
        }
        try bob.client.acknowledge(ids)
        // The receipt goes back the other way, on the other node.
        let receipt = try bob.client.send(on: lb, Array("delivered 0-2".utf8))
        XCTAssertEqual(bob.next(), .sent(seq: receipt, forwarded: true))
        guard case .delivery(let back)? = alice.next() else { return XCTFail("alice got no receipt") }
        XCTAssertEqual(back.payload, Array("delivered 0-2".utf8))
        XCTAssertEqual(back.link, la)
        try alice.client.acknowledge([back.id])

        // Leaving the link reaches the other node.
        try alice.client.leave(la)
        XCTAssertEqual(bob.next(), .peerGone(link: lb))

        // Cover (link 0) is held in JetStream for the sender's own mailbox, not in her node:
        // it is handed back on the other node too.
        // (Her own reader may hand it to her before JetStream's answer reaches her node.)
        let cover = try alice.client.send(on: 0, Array("cover".utf8))
        XCTAssertNotNil(poll(timeout: 5) { () -> Bool? in
            guard let event = alice.next(timeout: 0.5) else { return nil }
            if case .delivery = event { return nil }
            XCTAssertEqual(event, .sent(seq: cover, forwarded: false), "answered as held")
            return true
        })
        try alice.reconnect(to: fixture.second.address)
        guard case .delivery(let own)? = alice.next() else { return XCTFail("alice's cover did not come back on the other node") }
        XCTAssertEqual(own.origin, .own)
        XCTAssertEqual(own.payload, Array("cover".utf8))
        try alice.client.acknowledge([own.id])
        XCTAssertEqual(alice.next(), .drained)

        // Acknowledged frames are gone: a new connection of bob's is handed nothing.
        try bob.reconnect(to: fixture.first.address)
        XCTAssertEqual(bob.client.heldAtConnect, 0)
        XCTAssertEqual(bob.next(), .drained)
    }

    func testHeldWhileOfflineHandedOverOnTheOtherNodeAheadFirst() throws {
        let fixture = try TwoNodes()
        let alice = fixture.alice, bob = fixture.bob, first = fixture.first.address, second = fixture.second.address
        let (la, code) = try Member.linkedThenOffline(fixture)
        var seqs: [UInt64] = []
        for i in 0..<5 { seqs.append(try alice.client.send(on: la, Array("held \(i)".utf8))) }
        let handshake = try alice.client.send(on: la, Array("handshake".utf8), ahead: true)
        for seq in seqs + [handshake] { XCTAssertEqual(alice.next(), .sent(seq: seq, forwarded: false)) }

        // Bob comes back on the other node: the handshake first, then the rest in order.
        try bob.reconnect(to: first)
        XCTAssertEqual(bob.client.heldAtConnect, 6)
        var payloads: [String] = []
        var ids: [HeldItemID] = []
        while payloads.count < 6, case .delivery(let d)? = bob.next() {
            XCTAssertEqual(d.origin, .link(code: code))
            XCTAssertNil(d.link, "not live on this connection")
            payloads.append(String(decoding: d.payload, as: UTF8.self))
            ids.append(d.id)
        }
        XCTAssertEqual(payloads, ["handshake"] + (0..<5).map { "held \($0)" })
        // Sent ahead while bob is here: handed over once (the first reader has stopped).
        let live = try alice.client.send(on: la, Array("handshake again".utf8), ahead: true)
        XCTAssertEqual(alice.next(), .sent(seq: live, forwarded: false))
        guard case .delivery(let liveDelivery)? = bob.next() else { return XCTFail("no live frame sent ahead") }
        XCTAssertEqual(liveDelivery.payload, Array("handshake again".utf8))
        try bob.client.acknowledge([liveDelivery.id])
        try bob.client.acknowledge(Array(ids.prefix(3)))
        try bob.client.ping(7)
        XCTAssertEqual(bob.client.nextEvent(timeout: 5), .pong(7), "no drained while three are not acknowledged")

        // What was not acknowledged is handed over again, on either node; nothing else.
        // (Deleting is asynchronous: a connection made at once may still be handed them.)
        XCTAssertNotNil(poll(timeout: 5) { () -> Bool? in
            try? bob.reconnect(to: second)
            return bob.client.heldAtConnect == 3 ? true : nil
        }, "the three acknowledged frames were deleted")
        var again: [String] = []
        var againIDs: [HeldItemID] = []
        while again.count < 3, case .delivery(let d)? = bob.next() {
            again.append(String(decoding: d.payload, as: UTF8.self))
            againIDs.append(d.id)
        }
        XCTAssertEqual(again, ["held 2", "held 3", "held 4"])
        try bob.client.acknowledge(againIDs)
        XCTAssertEqual(bob.next(), .drained, "once all is acknowledged")
    }

    func testMailboxQuotaRefusesAndRoomComesBackWithAcknowledgements() throws {
        let fixture = try TwoNodes(["--quota", "3"])
        let alice = fixture.alice, bob = fixture.bob
        let (la, _) = try Member.linkedThenOffline(fixture)

        var seqs: [UInt64] = []
        for i in 0..<4 { seqs.append(try alice.client.send(on: la, Array("frame \(i)".utf8))) }
        for seq in seqs.prefix(3) { XCTAssertEqual(alice.next(), .sent(seq: seq, forwarded: false)) }
        XCTAssertEqual(alice.next(), .refused(seq: seqs[3], reason: .quotaExceeded), "JetStream's per-subject limit is the quota")

        try bob.reconnect(to: fixture.first.address)
        var ids: [HeldItemID] = []
        while ids.count < 3, case .delivery(let d)? = bob.next() { ids.append(d.id) }
        XCTAssertEqual(ids.count, 3, "only what was taken is held")
        try bob.client.acknowledge(ids)
        XCTAssertEqual(bob.next(), .drained)
        // Deleting is asynchronous: the room comes back within moments.
        let retried = poll(timeout: 5) { () -> RelayEvent? in
            guard let seq = try? alice.client.send(on: la, Array("frame 3".utf8)) else { return nil }
            let answer = alice.next()
            if case .sent(seq, _)? = answer { return answer }
            XCTAssertEqual(answer, .refused(seq: seq, reason: .quotaExceeded))
            return nil
        }
        XCTAssertNotNil(retried, "taken once bob acknowledged")
        guard case .delivery(let d)? = bob.next() else { return XCTFail("bob got no frame 3") }
        XCTAssertEqual(d.payload, Array("frame 3".utf8))
    }

    func testNodeMemoryIsFlatInTheNumberOfHeldFrames() throws {
        let fixture = try TwoNodes()
        let (la, _) = try Member.linkedThenOffline(fixture)
        // Just under 60 KB: the size class a client pads it to stays 64 KiB on the wire.
        let payload = [UInt8](repeating: 0x5a, count: 60_000)
        func hold(_ count: Int) throws {
            XCTAssertEqual(try fixture.alice.sendAll(count, on: la) { _ in payload }, count, "every frame was taken")
        }
        // Rounds of about 4 MiB each, in large frames: the first two warm the node's
        // buffers up; the 61 MiB held after them must not stay in the node (its heap moves
        // by a step now and then, never by what is held). Small frames
        // measured the heap's warm-up instead: 9,000 frames of 4 KB grow it by 6 to 10 MB
        // before it levels off, whatever is held (seen with 36 rounds of them).
        var resident: [Int] = []
        for _ in 0..<18 {
            try hold(64)
            resident.append(try XCTUnwrap(fixture.first.node.residentBytes))
        }
        print("node RSS after each 3.7 MiB held: \(resident.map { "\($0 >> 10) KiB" })")
        // A node that kept what it holds grows by all of it (about 61 MiB over rounds 2–18);
        // its heap's warm-up is a fraction, and machine-dependent (0.1–2 MB on one machine,
        // 8.6 MB levelling off after 12 rounds on another): the bound is a quarter of what
        // was held meanwhile.
        let heldMeanwhile = 16 * 64 * payload.count
        XCTAssertLessThan(resident[17] - resident[1], heldMeanwhile / 4,
                          "\(heldMeanwhile >> 20) MiB more held grew the node: \(resident.map { $0 >> 10 }) KiB")
    }

    func testABacklogOfLargeFramesIsHandedOverWithinTheNodesBudget() throws {
        let fixture = try TwoNodes()
        let bob = fixture.bob
        let (la, _) = try Member.linkedThenOffline(fixture)
        // 300 file chunks of 60 KiB: more than a reader may bring before acknowledgements
        // (about 10 MiB), so the handover goes on only as bob acknowledges.
        let taken = try fixture.alice.sendAll(300, on: la) { [UInt8](repeating: UInt8($0 % 251), count: 60 << 10) + Array("\($0)".utf8) }
        XCTAssertEqual(taken, 300)

        try bob.reconnect(to: fixture.first.address)
        XCTAssertEqual(bob.client.heldAtConnect, 300)
        var order: [Int] = []
        while order.count < 300, case .delivery(let d)? = bob.next() {
            order.append(Int(String(decoding: d.payload.suffix(from: 60 << 10), as: UTF8.self)) ?? -1)
            try bob.client.acknowledge([d.id])
        }
        XCTAssertEqual(order, Array(0..<300), "all of it, in order")
        XCTAssertEqual(bob.next(), .drained)
    }

    func testMailboxMoveBringsWhatWasHeldToTheNewMailbox() throws {
        let fixture = try TwoNodes()
        let alice = fixture.alice, bob = fixture.bob
        let (la, _) = try Member.linkedThenOffline(fixture)
        for i in 0..<2 {
            let seq = try alice.client.send(on: la, Array("before the move \(i)".utf8))
            XCTAssertEqual(alice.next(), .sent(seq: seq, forwarded: false))
        }

        // Bob's new mailbox key, on the other node, asks for what the old one holds.
        let moved = try Member(fixture.first.address)
        XCTAssertEqual(moved.next(), .drained)
        try moved.client.moveMailbox(from: bob.key)
        var payloads: [String] = []
        var ids: [HeldItemID] = []
        while payloads.count < 2, case .delivery(let d)? = moved.next() {
            payloads.append(String(decoding: d.payload, as: UTF8.self))
            ids.append(d.id)
        }
        XCTAssertEqual(payloads, ["before the move 0", "before the move 1"])
        try moved.client.acknowledge(ids)
        // The old mailbox keeps nothing.
        XCTAssertNotNil(poll(timeout: 5) { () -> Bool? in
            try? bob.reconnect(to: fixture.second.address)
            return bob.client.heldAtConnect == 0 ? true : nil
        })
    }

    func testNodeStopsCleanlyOnSigterm() throws {
        let cluster = try ClusterFixture(servers: 1)
        let (node, address) = try cluster.startNode()
        let member = try Member(address)
        XCTAssertEqual(member.next(), .drained)
        node.send(SIGTERM)
        XCTAssertEqual(node.exitStatus(timeout: 10), 0, node.stderr)
        XCTAssertTrue(node.stderr.contains("signal 15: stopping"), node.stderr)
    }

    func testClusterOptionMistakesAreOneLineAndExitTwo() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-cluster-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("k").path
        let cases: [([String], String)] = [
            (["--cluster", "http://127.0.0.1:4222"], "--cluster takes nats://HOST:PORT"),
            (["--cluster", "nats://127.0.0.1:4222,nats://127.0.0.1"], "not \"nats://127.0.0.1\""),
            (["--cluster", "nats://127.0.0.1:4222", "--persist", directory.appendingPathComponent("held").path], "exclude each other"),
        ]
        for (i, (arguments, expected)) in cases.enumerated() {
            let node = Child(name: "node-\(i)", executable: ClusterFixture.relayBinary,
                             arguments: ["--listen", "127.0.0.1:0", "--key-file", key] + arguments, directory: directory)
            try node.start()
            XCTAssertEqual(node.exitStatus(timeout: 10), 2, "\(arguments)")
            let lines = node.stderr.split(separator: "\n")
            XCTAssertEqual(lines.count, 1, node.stderr)
            XCTAssertTrue(node.stderr.contains(expected), node.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("held").path), "nothing made")
    }

    func testUnreachableNatsAtStartIsOneLineAndExitOne() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-cluster-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = LoopbackPort.free()
        let node = Child(name: "node", executable: ClusterFixture.relayBinary,
                         arguments: ["--listen", "127.0.0.1:0", "--key-file", directory.appendingPathComponent("k").path,
                                     "--cluster", "nats://127.0.0.1:\(port)"], directory: directory)
        try node.start()
        defer { node.stop(signal: SIGKILL) }
        XCTAssertEqual(node.exitStatus(timeout: 10), 1)
        let lines = node.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, node.stderr)
        XCTAssertTrue(lines.first?.contains("cannot reach the cluster at nats://127.0.0.1:\(port)") == true, node.stderr)
        XCTAssertEqual(node.stdout, "", "no address printed")
    }
}
