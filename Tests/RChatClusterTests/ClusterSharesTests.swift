import Foundation
import Glibc
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
import XCTest

/// A cluster bounds each mailbox as one relay does, whichever nodes its senders use (issue
/// 27, findings 1, 11 and 12): held bytes (`--quota-bytes`), the cover allowance, message
/// requests (`--request-quota`), what one sending mailbox and one sending host hold, and
/// the invites bucket forgets invites no node refreshes.
final class ClusterSharesTests: XCTestCase {
    static let big = [UInt8](repeating: 0xC5, count: RelayProtocol.maximumPayloadBytes)

    /// Sends `payload` on `link` until refused (at most `limit` times): how many were taken,
    /// and the refusal. Deliveries and notices in between are passed over.
    private func sendUntilRefused(_ member: Member, on link: LinkID, _ payload: [UInt8], limit: Int,
                                  file: StaticString = #filePath, line: UInt = #line) throws -> (taken: Int, refusal: RefusalReason?) {
        for taken in 0..<limit {
            let seq = try member.client.send(on: link, payload)
            answer: while let event = member.next() {
                switch event {
                case .sent(seq, _): break answer
                case .refused(seq, let reason): return (taken, reason)
                case .delivery, .drained, .peerGone: continue
                default: XCTFail("unexpected \(event)", file: file, line: line); return (taken, nil)
                }
            }
        }
        return (limit, nil)
    }

    /// Sends `count` payloads on `link` without waiting, then takes every answer: how many
    /// were taken (answers may come in any order: a refusal skips JetStream).
    private func sendAtOnce(_ member: Member, on link: LinkID, _ payload: [UInt8], count: Int,
                            file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        var waiting = Set<UInt64>()
        for _ in 0..<count { waiting.insert(try member.client.send(on: link, payload)) }
        var taken = 0
        while !waiting.isEmpty, let event = member.next() {
            switch event {
            case .sent(let seq, _) where waiting.remove(seq) != nil: taken += 1
            case .refused(let seq, _) where waiting.remove(seq) != nil: break
            case .delivery, .drained, .peerGone: continue
            default: XCTFail("unexpected \(event)", file: file, line: line); return taken
            }
        }
        XCTAssertTrue(waiting.isEmpty, "every frame answered", file: file, line: line)
        return taken
    }

    /// Two fresh users on these nodes chat: each frame forwarded, handed over, acknowledged.
    private func assertLiveChat(from first: RelayAddress, to second: RelayAddress, file: StaticString = #filePath, line: UInt = #line) throws {
        let carol = try Member(first, from: "127.0.0.7"), dave = try Member(second, from: "127.0.0.8")
        XCTAssertEqual(carol.next(), .drained, file: file, line: line)
        XCTAssertEqual(dave.next(), .drained, file: file, line: line)
        let (lc, _, _) = try link(carol, dave, file: file, line: line)
        for i in 0..<4 {
            let seq = try carol.client.send(on: lc, Self.big)
            XCTAssertEqual(carol.next(), .sent(seq: seq, forwarded: true), "live chat frame \(i)", file: file, line: line)
            guard case .delivery(let d)? = dave.next() else { return XCTFail("dave got no frame \(i)", file: file, line: line) }
            XCTAssertEqual(d.payload, Self.big, file: file, line: line)
            try dave.client.acknowledge([d.id])
        }
    }

    /// A second connection of `member`'s mailbox, on `address`.
    private func again(_ member: Member, on address: RelayAddress, file: StaticString = #filePath, line: UInt = #line) throws -> Member {
        let other = try Member(address, key: member.key)
        XCTAssertEqual(other.next(), .drained, file: file, line: line)
        return other
    }

    func testAStrangerSendingThroughBothNodesCannotExceedTheMailboxsBytes() throws {
        let quotaBytes = 1 << 20
        let fixture = try TwoNodes(["--quota-bytes", String(quotaBytes)])
        let bob = fixture.bob
        // The stranger reaches bob through a connection on each node.
        let viaFirst = fixture.alice, viaSecond = try again(fixture.alice, on: fixture.second.address)
        let (l1, _, _) = try link(viaFirst, bob)
        let (l2, _, _) = try link(viaSecond, bob)
        bob.client.close()
        XCTAssertEqual(viaFirst.next(), .peerGone(link: l1))
        XCTAssertEqual(viaSecond.next(), .peerGone(link: l2))

        var taken = 0
        var refusals: [RefusalReason?] = []
        for _ in 0..<2 {
            for (member, l) in [(viaFirst, l1), (viaSecond, l2)] {
                let result = try sendUntilRefused(member, on: l, Self.big, limit: 6)
                taken += result.taken
                refusals.append(result.refusal)
            }
        }
        XCTAssertLessThanOrEqual(taken * Self.big.count, quotaBytes, "the mailbox's bytes over both nodes stay within --quota-bytes")
        XCTAssertEqual(taken, quotaBytes / Self.big.count, "and up to it")
        XCTAssertTrue(refusals.contains(.byteQuotaExceeded), "\(refusals)")

        // Two others chat live across the nodes meanwhile.
        try assertLiveChat(from: fixture.first.address, to: fixture.second.address)

        // Bob comes back, takes and acknowledges it all: there is room again.
        try bob.reconnect(to: fixture.first.address)
        var ids: [HeldItemID] = []
        while ids.count < taken, case .delivery(let d)? = bob.next() { ids.append(d.id) }
        XCTAssertEqual(ids.count, taken)
        try bob.client.acknowledge(ids)
        XCTAssertEqual(bob.next(), .drained)
        let retried = poll(timeout: 5) { () -> Bool? in
            guard let result = try? sendUntilRefused(viaSecond, on: l2, Self.big, limit: 1) else { return nil }
            return result.taken == 1 ? true : nil
        }
        XCTAssertNotNil(retried, "taken once bob acknowledged")
        guard case .delivery(let d)? = bob.next() else { return XCTFail("bob got no new frame") }
        XCTAssertEqual(d.payload, Self.big)
    }

    /// A linked pair whose recipient (on `node`) has gone: what `sender` sends is held.
    private func heldFor(_ sender: Member, recipientOn node: RelayAddress, file: StaticString = #filePath, line: UInt = #line) throws -> LinkID {
        let recipient = try Member(node, from: "127.0.0.9")
        XCTAssertEqual(recipient.next(), .drained, file: file, line: line)
        let (l, _, _) = try link(sender, recipient, file: file, line: line)
        recipient.client.close()
        XCTAssertEqual(sender.next(), .peerGone(link: l), file: file, line: line)
        return l
    }

    func testASendersAndAHostsHeldBytesAreBoundedOverBothNodes() throws {
        // A quarter of 4 MiB per host, an eighth per sending mailbox: 16 and 8 frames of 64 KiB.
        let fixture = try TwoNodes(["--max-held-bytes", String(4 << 20)])
        let nodes = [fixture.first.address, fixture.second.address]
        // One mailbox, through both nodes, to two offline recipients.
        let viaFirst = try Member(nodes[0], from: "127.0.0.2"), viaSecond = try Member(nodes[1], key: viaFirst.key, from: "127.0.0.2")
        XCTAssertEqual(viaFirst.next(), .drained)
        XCTAssertEqual(viaSecond.next(), .drained)
        let l1 = try heldFor(viaFirst, recipientOn: nodes[1]), l2 = try heldFor(viaSecond, recipientOn: nodes[0])
        var taken = 0, refusal: RefusalReason?
        for (member, l) in [(viaFirst, l1), (viaSecond, l2)] {
            let result = try sendUntilRefused(member, on: l, Self.big, limit: 10)
            taken += result.taken
            refusal = result.refusal
        }
        XCTAssertEqual(taken, 8, "an eighth of --max-held-bytes for one sending mailbox, over both nodes")
        XCTAssertEqual(refusal, .relayFull)

        // Fresh mailboxes from another host, on both nodes: the host stops at its quarter.
        // All ready before the first sends, so each sends straight after the refusal of the
        // one before: what a refused frame had counted must be given back by then.
        taken = 0
        var stops: [String] = []
        var senders: [(Member, LinkID)] = []
        for i in 0..<3 {
            let member = try Member(nodes[i % 2], from: "127.0.0.3")
            XCTAssertEqual(member.next(), .drained)
            senders.append((member, try heldFor(member, recipientOn: nodes[(i + 1) % 2])))
        }
        for (i, (member, l)) in senders.enumerated() {
            // The second sends its first eight at once, straight after the first's refusal
            // on the other node: judged before a give-back written late would be there.
            let ahead = i == 1 ? try sendAtOnce(member, on: l, Self.big, count: 8) : 0
            let result = try sendUntilRefused(member, on: l, Self.big, limit: 10 - ahead)
            taken += ahead + result.taken
            refusal = result.refusal
            stops.append("member \(i) on node \(i % 2): \(ahead + result.taken) taken, then \(result.refusal.map { "\($0)" } ?? "no refusal")")
        }
        XCTAssertEqual(taken, 16, "a quarter of --max-held-bytes for one host, over both nodes (\(stops.joined(separator: "; ")))")
        XCTAssertEqual(refusal, .relayFull)

        let other = try Member(nodes[1], from: "127.0.0.4")
        XCTAssertEqual(other.next(), .drained)
        XCTAssertEqual(try sendUntilRefused(other, on: try heldFor(other, recipientOn: nodes[0]), Self.big, limit: 2).taken, 2,
                       "another host is still held for")
    }

    /// Many hosts within their budgets fill the stream's `--max-held-bytes`: held frames
    /// are then refused, and two connected users still chat across the nodes.
    func testLiveForwardingGoesOnWhenTheClusterIsFull() throws {
        let fixture = try TwoNodes(["--max-held-bytes", String(4 << 20)])
        let nodes = [fixture.first.address, fixture.second.address]
        for host in 2...5 {
            for i in 0..<2 {
                let member = try Member(nodes[i], from: "127.0.0.\(host)")
                XCTAssertEqual(member.next(), .drained)
                _ = try sendUntilRefused(member, on: try heldFor(member, recipientOn: nodes[1 - i]), Self.big, limit: 8)
                member.client.close()
            }
        }
        let late = try Member(nodes[0], from: "127.0.0.6")
        XCTAssertEqual(late.next(), .drained)
        let lateLink = try heldFor(late, recipientOn: nodes[1])
        // Each node reads what the stream holds at its heartbeat.
        let full = poll(timeout: 5, interval: 0.1) { () -> Bool? in
            (try? sendUntilRefused(late, on: lateLink, Self.big, limit: 1).refusal) == .relayFull ? true : nil
        }
        XCTAssertNotNil(full, "a held frame is refused once the stream holds --max-held-bytes")

        try assertLiveChat(from: nodes[0], to: nodes[1])
    }

    func testCoverThroughBothNodesStaysWithinItsAllowance() throws {
        let fixture = try TwoNodes()
        let first = fixture.alice, second = try again(fixture.alice, on: fixture.second.address)
        let small = [UInt8](repeating: 7, count: 200)
        var taken = 0
        var refusals: [RefusalReason?] = []
        for member in [first, second] {
            let result = try sendUntilRefused(member, on: 0, small, limit: 20)
            taken += result.taken
            refusals.append(result.refusal)
        }
        XCTAssertEqual(taken, 16, "--cover-quota (16) over both nodes")
        XCTAssertEqual(refusals.last, .quotaExceeded)
    }

    func testTheRequestQuotaHoldsOverBothNodes() throws {
        let fixture = try TwoNodes(["--request-quota", "3"])
        let bob = fixture.bob
        let token = try bob.client.registerInvites(salts: [Random.bytes(InviteToken.saltBytes)])[0]
        bob.client.close()
        let onFirst = fixture.alice
        let onSecond = try Member(fixture.second.address)
        XCTAssertEqual(onSecond.next(), .drained)
        // The registration reaches the bucket in a moment: the first request taken is one of three.
        let first = poll(timeout: 5) { () -> Bool? in
            guard let seq = try? onFirst.client.sendRequest(to: token, Array("hi".utf8)) else { return nil }
            return onFirst.next(timeout: 2) == .sent(seq: seq, forwarded: false) ? true : nil
        }
        XCTAssertNotNil(first)
        var taken = 1
        for member in [onFirst, onSecond] {
            for _ in 0..<3 {
                let seq = try member.client.sendRequest(to: token, Array("hi".utf8))
                switch member.next() {
                case .sent(seq, _)?: taken += 1
                case .refused(seq, let reason)?: XCTAssertEqual(reason, .requestQuotaExceeded)
                case let other: XCTFail("unexpected \(String(describing: other))")
                }
            }
        }
        XCTAssertEqual(taken, 3, "--request-quota for bob over both nodes, not per node")
        try bob.reconnect(to: fixture.first.address)
        var got = 0
        while got < 4, case .delivery? = bob.next(timeout: got < 3 ? 10 : 1) { got += 1 }
        XCTAssertEqual(got, 3, "what was taken is held")
    }

    /// An invite whose node is gone (SIGKILL: nothing deletes it) leaves the bucket after
    /// `--invite-expiry`; one whose owner stays connected is refreshed by its node and kept.
    func testTheInvitesBucketForgetsWhatNoNodeRefreshes() throws {
        let expiry = 2.0
        let fixture = try TwoNodes(["--invite-expiry", "2"])
        let kept = try fixture.alice.client.registerInvites(salts: [Random.bytes(InviteToken.saltBytes)])[0]
        let dropped = try fixture.bob.client.registerInvites(salts: [Random.bytes(InviteToken.saltBytes)])[0]
        let registeredAt = Date()
        // A third node knows neither but through the bucket.
        let (_, third) = try fixture.cluster.startNode(["--invite-expiry", "2"], firstServer: 2)
        let stranger = try Member(third)
        XCTAssertEqual(stranger.next(), .drained)
        func known(_ token: InviteToken) -> Bool? {
            guard let seq = try? stranger.client.sendRequest(to: token, Array("hi".utf8)) else { return nil }
            switch stranger.next(timeout: 3) {
            case .sent(seq, _)?: return true
            case .refused(seq, .unknownInvite)?: return false
            default: return nil
            }
        }
        XCTAssertNotNil(poll(timeout: 5) { known(dropped) == true ? true : nil }, "bob's invite is in the bucket")
        fixture.second.node.stop(signal: SIGKILL)
        XCTAssertNotNil(poll(timeout: 6 * expiry, interval: 0.2) { known(dropped) == false ? true : nil },
                        "the bucket's TTL forgets an invite no node registers again")
        while Date().timeIntervalSince(registeredAt) < 3 * expiry {
            XCTAssertEqual(known(kept), true, "alice is connected: her node refreshes her invite")
            _ = poll(timeout: 0.25, interval: 0.25) { fixture.alice.client.nextEvent(timeout: 0) }
        }
    }
}
