import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
import XCTest

/// Pairing, forwarding, holding, handover and invites against a real rchat-relay.
final class RelayBehaviourTests: XCTestCase {
    var relay: RelayProcess!

    override func setUp() { relay = RelayProcess() }
    override func tearDown() { relay.stop(signal: SIGKILL); relay = nil }

    func testPairingLinksTwoLiveMailboxesOnceAndTellsBoth() throws {
        let address = try relay.start()
        let pair = try link(address)
        // The code is used up: a third mailbox presenting it waits alone.
        let c = try RelayClient.connect(to: address, mailboxKey: .generate())
        XCTAssertEqual(c.nextEvent(timeout: 5), .drained)
        try c.present([pair.code])
        c.expectQuiet()
        // Two connections of one mailbox never link with each other.
        let same = try RelayClient.connect(to: address, mailboxKey: pair.keyA)
        let code = Random.bytes(32)
        try pair.a.present([code])
        try same.present([code])
        pair.a.expectQuiet()
        XCTAssertTrue(relay.stderr.contains("made link \(pair.link)"), relay.stderr)
    }

    /// `leave`: one end gives a link up while both stay connected. The peer is told
    /// (`peerGone`), what it sends on the link is held for the mailbox that left, a send on
    /// the left link is refused, a link not held (or left twice) is ignored, and the two
    /// link again on a new code.
    func testLeavingALinkTellsThePeerAndTheTwoCanLinkAgain() throws {
        let address = try relay.start()
        let pair = try link(address)
        try pair.a.leave(pair.link)
        XCTAssertEqual(pair.b.nextEvent(timeout: 5), .peerGone(link: pair.link))
        let held = try pair.b.send(on: pair.link, [7])
        guard case .sent(held, _)? = pair.b.nextEvent(timeout: 5) else { return XCTFail("not taken") }
        let got = pair.a.expectDeliveries(1)
        XCTAssertEqual(got.map(\.payload), [[7]])
        XCTAssertEqual(got.first?.link, nil, "held for the mailbox, not live on a link it left")
        try pair.a.acknowledge(got.map(\.id))
        let refused = try pair.a.send(on: pair.link, [8])
        XCTAssertEqual(pair.a.nextEvent(timeout: 5), .refused(seq: refused, reason: .unknownLink))
        try pair.a.leave(pair.link)
        try pair.a.leave(0xDEAD_BEEF)
        try pair.a.ping(9)
        XCTAssertEqual(pair.a.nextEvent(timeout: 5), .pong(9), "still connected after leaving unknown links")

        let again = Random.bytes(32)
        try pair.a.present([again])
        try pair.b.present([again])
        guard case .linked(let newLink, let code)? = pair.a.nextEvent(timeout: 5) else { return XCTFail("not linked again") }
        XCTAssertEqual(code, again)
        XCTAssertNotEqual(newLink, pair.link)
        XCTAssertEqual(pair.b.nextEvent(timeout: 5), .linked(link: newLink, code: again))
    }

    /// A mailbox moved (after `keys rotate`): what was held for the old one reaches the new
    /// one, with --persist across a restart too, and the old one holds nothing more.
    func testAMovedMailboxHandsItsHeldFramesToTheNewOne() throws {
        let address = try relay.start(["--persist", relay.persistPath])
        let pair = try link(address)
        pair.b.close()
        XCTAssertNotNil(waitFor(timeout: 5) { self.relay.stderr.contains("(mailbox \(pair.b.mailbox)) closed") ? true : nil })
        XCTAssertEqual(pair.a.nextEvent(timeout: 5), .peerGone(link: pair.link))
        for n in 1...2 {
            let seq = try pair.a.send(on: pair.link, [UInt8(n)])
            XCTAssertEqual(pair.a.nextEvent(timeout: 5), .sent(seq: seq, forwarded: false))
        }
        relay.stop(signal: SIGKILL)
        _ = try relay.start(["--persist", relay.persistPath], samePort: true)
        let newKey = SigningKey.generate()
        let moved = try RelayClient.connect(to: address, mailboxKey: newKey)
        XCTAssertEqual(moved.nextEvent(timeout: 5), .drained)
        try moved.moveMailbox(from: pair.keyB)
        let got = moved.expectDeliveries(2)
        XCTAssertEqual(got.map(\.payload), [[1], [2]])
        XCTAssertTrue(got.allSatisfy { $0.origin == .link(code: pair.code) })
        try moved.acknowledge(got.map(\.id))
        let old = try RelayClient.connect(to: address, mailboxKey: pair.keyB)
        XCTAssertEqual(old.heldAtConnect, 0)
        XCTAssertEqual(old.nextEvent(timeout: 5), .drained)
        old.expectQuiet()
    }

    /// The relay does not hand out the social graph: nothing a client is told names the
    /// peer's mailbox (a `linked` names the link and code; a delivery names the code), and
    /// no log line (nor, with --persist, the held rows' sealed content) pairs two mailboxes.
    func testNoClientAndNoLogLineLearnsWhichMailboxesTalk() throws {
        let address = try relay.start(["--persist", relay.persistPath])
        let pair = try link(address)
        let live = try pair.a.send(on: pair.link, [1, 2, 3])
        XCTAssertEqual(pair.a.nextEvent(timeout: 5), .sent(seq: live, forwarded: true))
        let got = pair.b.expectDeliveries(1)
        XCTAssertEqual(got.first?.origin, .link(code: pair.code))
        try pair.b.acknowledge(got.map(\.id))
        let bKey = pair.keyB
        pair.b.close()
        XCTAssertNotNil(waitFor(timeout: 5) { self.relay.stderr.contains("(mailbox \(pair.b.mailbox)) closed") ? true : nil })
        let held = try pair.a.send(on: pair.link, [4, 5])
        XCTAssertEqual(pair.a.nextEvent(timeout: 5), .peerGone(link: pair.link))
        XCTAssertEqual(pair.a.nextEvent(timeout: 5), .sent(seq: held, forwarded: false))
        pair.a.close()
        XCTAssertNotNil(waitFor(timeout: 5) { self.relay.stderr.contains("(mailbox \(pair.a.mailbox)) closed") ? true : nil })
        relay.stop(signal: SIGTERM)
        var log = relay.stderr
        _ = try relay.start(["--persist", relay.persistPath], samePort: true)
        let back = try RelayClient.connect(to: address, mailboxKey: bKey)
        let handed = back.expectDeliveries(1)
        XCTAssertEqual(handed.first?.origin, .link(code: pair.code), "a held frame names no sender after a restart either")

        back.close()
        XCTAssertNotNil(waitFor(timeout: 5) { self.relay.stderr.contains("(mailbox \(back.mailbox)) closed") ? true : nil })
        log += relay.stderr
        let a = pair.a.mailbox.description, b = pair.b.mailbox.description
        for line in log.split(separator: "\n") {
            XCTAssertFalse(line.contains(a) && line.contains(b), "a log line pairs two mailboxes: \(line)")
        }
        XCTAssertTrue(log.contains("made link \(pair.link)"), log)
    }

    func testWaitingCodesExpire() throws {
        let address = try relay.start(["--pairing-timeout", "0.3"])
        let a = try RelayClient.connect(to: address, mailboxKey: .generate())
        let b = try RelayClient.connect(to: address, mailboxKey: .generate())
        XCTAssertEqual(a.nextEvent(timeout: 5), .drained)
        XCTAssertEqual(b.nextEvent(timeout: 5), .drained)
        let code = Random.bytes(32)
        try a.present([code])
        // Time has to pass the pairing timeout (0.3 s) for the code to expire; there is no
        // event to poll for, so wait until a deadline well past it.
        let expiryDeadline = Date(timeIntervalSinceNow: 1.2)
        Thread.sleep(until: expiryDeadline)
        try b.present([code])
        b.expectQuiet()
        a.expectQuiet(0.05)
    }

    func testForwardingToALivePeerIsSentAndDelivered() throws {
        let address = try relay.start()
        let pair = try link(address)
        var seqs: [UInt64] = []
        for i in 0..<5 { seqs.append(try pair.a.send(on: pair.link, [UInt8(i)], flush: i == 4)) }
        for s in seqs { XCTAssertEqual(pair.a.nextEvent(timeout: 5), .sent(seq: s, forwarded: true)) }
        let got = pair.b.expectDeliveries(5)
        XCTAssertEqual(got.map(\.payload), (0..<5).map { [UInt8($0)] })
        XCTAssertTrue(got.allSatisfy { $0.link == pair.link && $0.origin == .link(code: pair.code) })
        try pair.b.acknowledge(got.map(\.id))
        // And back the other way.
        let back = try pair.b.send(on: pair.link, [9])
        XCTAssertEqual(pair.b.nextEvent(timeout: 5), .sent(seq: back, forwarded: true))
        XCTAssertEqual(pair.a.expectDeliveries(1).first?.payload, [9])
        // A link the client was never given is refused.
        let bogus = try pair.a.send(on: 999_999, [1])
        XCTAssertEqual(pair.a.nextEvent(timeout: 5), .refused(seq: bogus, reason: .unknownLink))
    }

    func testHoldingWhileOfflineThenHandoverAfterReconnect() throws {
        let address = try relay.start()
        let pair = try link(address)
        pair.b.close()
        XCTAssertEqual(pair.a.nextEvent(timeout: 5), .peerGone(link: pair.link))
        for i in 0..<3 {
            let s = try pair.a.send(on: pair.link, Array("held \(i)".utf8))
            XCTAssertEqual(pair.a.nextEvent(timeout: 5), .sent(seq: s, forwarded: false))
        }
        let b = try RelayClient.connect(to: address, mailboxKey: pair.keyB)
        XCTAssertEqual(b.heldAtConnect, 3)
        let got = b.expectDeliveries(3)
        XCTAssertEqual(got.map { String(decoding: $0.payload, as: UTF8.self) }, ["held 0", "held 1", "held 2"])
        XCTAssertEqual(got.map(\.id), got.map(\.id).sorted(), "oldest first")
        for d in got {
            XCTAssertNil(d.link, "the link is not live on the new connection")
            XCTAssertEqual(d.origin, .link(code: pair.code))
            XCTAssertGreaterThan(d.heldAt, 1_600_000_000)
        }
        try b.acknowledge(got.map(\.id))
        XCTAssertEqual(b.nextEvent(timeout: 5), .drained)
        b.close()
        let again = try RelayClient.connect(to: address, mailboxKey: pair.keyB)
        XCTAssertEqual(again.heldAtConnect, 0, "acknowledged items are gone")
        XCTAssertEqual(again.nextEvent(timeout: 5), .drained)
        again.close()
        XCTAssertNotNil(waitFor(timeout: 5) { self.relay.stderr.contains("in: hello=1 auth=1 acknowledge=1;") ? true : nil },
                        "the counters show what the handover client sent: \(relay.stderr)")
    }

    func testKilledMidHandoverLosesNothing() throws {
        let address = try relay.start()
        let pair = try link(address)
        pair.b.close()
        _ = pair.a.nextEvent(timeout: 5)
        var seqs: [UInt64] = []
        for i in 0..<10 { seqs.append(try pair.a.send(on: pair.link, [UInt8(i)], flush: false)) }
        try pair.a.flush()
        for s in seqs { XCTAssertEqual(pair.a.nextEvent(timeout: 5), .sent(seq: s, forwarded: false)) }

        // A client that stores four, acknowledges them, stops acknowledging and dies.
        let dying = try RelayClient.connect(to: address, mailboxKey: pair.keyB)
        let first = dying.expectDeliveries(10)
        try dying.acknowledge(first.prefix(4).map(\.id))
        try dying.ping(1)
        XCTAssertEqual(dying.nextEvent(timeout: 5), .pong(1), "the acknowledgements were processed")
        dying.close()

        let b = try RelayClient.connect(to: address, mailboxKey: pair.keyB)
        XCTAssertEqual(b.heldAtConnect, 6)
        let rest = b.expectDeliveries(6)
        XCTAssertEqual(rest.map(\.id), first.suffix(6).map(\.id))
        XCTAssertEqual(rest.map(\.payload), (4..<10).map { [UInt8($0)] })
    }

    /// A handshake sent ahead reaches a peer draining a long backlog at once, even with
    /// the handover window full; everything else keeps its order behind the backlog.
    func testFramesSentAheadPassTheBacklogAndNothingElseDoes() throws {
        let address = try relay.start(["--quota", "20000"])
        let old = try link(address)
        old.b.close()
        XCTAssertEqual(old.a.nextEvent(timeout: 5), .peerGone(link: old.link))
        // 1 KiB frames, 3,000 of them: more than the window's 2 MiB.
        let backlog = 3_000
        func payload(_ i: Int) -> [UInt8] { Array("held \(i) ".utf8) + [UInt8](repeating: 46, count: 1_000) }
        var seqs: [UInt64] = []
        for i in 0..<backlog { seqs.append(try old.a.send(on: old.link, payload(i), flush: i == backlog - 1)) }
        for s in seqs { XCTAssertEqual(old.a.nextEvent(timeout: 5), .sent(seq: s, forwarded: false)) }

        // The first window: whatever the relay hands over before it needs acknowledgements.
        let b = try RelayClient.connect(to: address, mailboxKey: old.keyB)
        var firstWindow: [Delivery] = []
        while case .delivery(let d)? = b.nextEvent(timeout: 1) { firstWindow.append(d) }
        XCTAssertGreaterThan(firstWindow.count, 0)
        XCTAssertLessThan(firstWindow.count, backlog, "the window holds the rest back")
        XCTAssertEqual(firstWindow.map(\.payload), (0..<firstWindow.count).map(payload), "oldest first")
        // The two meet again on a new link while the window is full.
        let code = Random.bytes(32)
        try old.a.present([code])
        try b.present([code])
        guard case .linked(let live, _)? = old.a.expectEvent(), case .linked? = b.expectEvent() else { return XCTFail("not linked") }
        let later = try old.a.send(on: live, Array("in order".utf8))
        XCTAssertEqual(old.a.expectEvent(), .sent(seq: later, forwarded: true))
        let hello = try old.a.send(on: live, Array("handshake".utf8), ahead: true)
        XCTAssertEqual(old.a.expectEvent(), .sent(seq: hello, forwarded: true))
        let jumped = b.expectDeliveries(1)
        XCTAssertEqual(jumped.map(\.payload), [Array("handshake".utf8)], "ahead of the backlog, past the full window")
        XCTAssertEqual(jumped.first?.link, live)

        // The rest comes in order as acknowledgements open the window: the backlog, then the
        // frame sent in order; the handshake is not handed over twice.
        try b.acknowledge(firstWindow.map(\.id) + jumped.map(\.id))
        var rest: [Delivery] = []
        while rest.count < backlog - firstWindow.count + 1 {
            let more = b.expectDeliveries(1)
            guard let d = more.first else { break }
            rest.append(d)
            try b.acknowledge([d.id])
        }
        XCTAssertEqual(rest.map(\.payload), (firstWindow.count..<backlog).map(payload) + [Array("in order".utf8)])
        XCTAssertEqual(b.nextEvent(timeout: 5), .drained)
    }

    func testQuotaRefusesWithAReasonAndHoldsNothing() throws {
        let address = try relay.start(["--quota", "3"])
        let pair = try link(address)
        pair.b.close()
        _ = pair.a.nextEvent(timeout: 5)
        for i in 0..<3 {
            let s = try pair.a.send(on: pair.link, [UInt8(i)])
            XCTAssertEqual(pair.a.nextEvent(timeout: 5), .sent(seq: s, forwarded: false))
        }
        let over = try pair.a.send(on: pair.link, [3])
        XCTAssertEqual(pair.a.nextEvent(timeout: 5), .refused(seq: over, reason: .quotaExceeded))
        let b = try RelayClient.connect(to: address, mailboxKey: pair.keyB)
        XCTAssertEqual(b.heldAtConnect, 3)
        let got = b.expectDeliveries(3)
        XCTAssertEqual(got.map(\.payload), [[0], [1], [2]])
        try b.acknowledge(got.map(\.id))
        XCTAssertEqual(b.nextEvent(timeout: 5), .drained)
        // Room again once handed over.
        let later = try pair.a.send(on: pair.link, [4])
        XCTAssertEqual(pair.a.nextEvent(timeout: 5), .sent(seq: later, forwarded: true))
    }

    func testInviteRequestsAreHeldLikeFramesAndDeliveredLive() throws {
        let address = try relay.start()
        let ownerKey = SigningKey.generate()
        let owner = try RelayClient.connect(to: address, mailboxKey: ownerKey)
        XCTAssertEqual(owner.nextEvent(timeout: 5), .drained)
        let token = try owner.registerInvites(salts: [Random.bytes(InviteToken.saltBytes)])[0]
        let stranger = try RelayClient.connect(to: address, mailboxKey: .generate())
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .drained)
        // Live.
        let live = try stranger.sendRequest(to: token, [1, 2, 3])
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .sent(seq: live, forwarded: true))
        let first = owner.expectDeliveries(1)
        XCTAssertEqual(first.first?.origin, .invite(token))
        try owner.acknowledge(first.map(\.id))
        owner.close()
        XCTAssertNotNil(waitFor(timeout: 5) { self.relay.stderr.contains("(mailbox \(owner.mailbox)) closed") ? true : nil })
        // Offline: held for the mailbox.
        let held = try stranger.sendRequest(to: token, [4, 5])
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .sent(seq: held, forwarded: false))
        let unknown = try stranger.sendRequest(to: InviteToken(bytes: Random.bytes(16))!, [6])
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .refused(seq: unknown, reason: .unknownInvite))
        let back = try RelayClient.connect(to: address, mailboxKey: ownerKey)
        let got = back.expectDeliveries(1)
        XCTAssertEqual(got.first?.payload, [4, 5])
        XCTAssertEqual(got.first?.origin, .invite(token))
        XCTAssertNil(got.first?.link)
    }

    func testHoldHoursAboveTheCapIsRefusedAtStart() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: RelayProcess.binary)
        p.arguments = ["--listen", "127.0.0.1:0", "--key-file", relay.keyFile, "--hold-hours", "73"]
        let err = Pipe()
        p.standardError = err
        p.standardOutput = Pipe()
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 2)
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(text.split(separator: "\n").count, 1, text)
        XCTAssertTrue(text.contains("72"), text)
    }
}
