import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
import XCTest

/// No stranger can fill a real rchat-relay (issue 27, finding 1): cover has a small
/// allowance per mailbox, what one host and one sending mailbox hold is budgeted (at most a
/// quarter and an eighth of `--max-held-bytes`), and a frame for a connected recipient is
/// forwarded even when the relay is full. The budgets are counted again at a `--persist` load.
final class RelayHeldShareTests: XCTestCase {
    var relay: RelayProcess!

    override func setUp() { relay = RelayProcess() }
    override func tearDown() { relay.stop(signal: SIGKILL); relay = nil }

    static let big = [UInt8](repeating: 0xC5, count: RelayProtocol.maximumPayloadBytes)

    /// Sends `payload` on `link` until the relay refuses it (at most `limit` times): how many
    /// it took, and the refusal. Deliveries (cover handed back) and `drained` are passed over.
    private func sendUntilRefused(_ client: RelayClient, on link: LinkID, limit: Int,
                                  file: StaticString = #filePath, line: UInt = #line) throws -> (taken: Int, refusal: RefusalReason?) {
        for taken in 0..<limit {
            let seq = try client.send(on: link, Self.big)
            answer: while let event = client.nextEvent(timeout: 10) {
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

    /// A linked pair from `host` whose B has gone: what A sends is held for B.
    private func offlinePair(_ address: RelayAddress, from host: String, file: StaticString = #filePath, line: UInt = #line) throws -> LinkedPair {
        let pair = try link(address, from: host, file: file, line: line)
        pair.b.close()
        XCTAssertEqual(pair.a.nextEvent(timeout: 5), .peerGone(link: pair.link), file: file, line: line)
        return pair
    }

    /// Two online users chat: each frame forwarded, handed over and acknowledged.
    private func assertLiveChat(_ address: RelayAddress, from host: String, frames: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let pair = try link(address, from: host, file: file, line: line)
        defer { pair.a.close(); pair.b.close() }
        for _ in 0..<frames {
            let seq = try pair.a.send(on: pair.link, Self.big)
            XCTAssertEqual(pair.a.nextEvent(timeout: 10), .sent(seq: seq, forwarded: true), "live chat refused", file: file, line: line)
            let got = pair.b.expectDeliveries(1, timeout: 10, file: file, line: line)
            guard let delivery = got.first else { return }
            XCTAssertEqual(delivery.payload, Self.big, file: file, line: line)
            try pair.b.acknowledge([delivery.id])
        }
    }

    /// The attack: fresh mailboxes from one host send cover and held frames, never
    /// acknowledging. The host stops at its quarter (each mailbox at its cover allowance);
    /// two other users still chat live and a third, offline, is still sent held frames.
    func testOneHostsCoverAndHeldFramesNeitherFillTheRelayNorStopOthers() throws {
        let maxHeld = 4 << 20
        let address = try relay.start(["--max-held-bytes", String(maxHeld), "--quota-bytes", String(1 << 20)])
        var attackers: [RelayClient] = []
        defer { for c in attackers { c.close() } }
        var takenBytes = 0
        for _ in 0..<12 {
            let client = try RelayClient.connect(to: address, mailboxKey: .generate(), timeout: 5, from: "127.0.0.2")
            attackers.append(client)
            let (taken, refusal) = try sendUntilRefused(client, on: 0, limit: 20)
            XCTAssertLessThanOrEqual(taken, 1, "cover beyond its allowance (64 KiB) is refused")
            XCTAssertEqual(refusal, .quotaExceeded)
            takenBytes += taken * Self.big.count
        }
        let held = try offlinePair(address, from: "127.0.0.2")
        defer { held.a.close() }
        let (taken, refusal) = try sendUntilRefused(held.a, on: held.link, limit: 80)
        takenBytes += taken * Self.big.count
        XCTAssertEqual(refusal, .relayFull, "the host's budget refuses, as a full relay does")
        XCTAssertLessThanOrEqual(takenBytes, maxHeld / 4, "one host holds at most a quarter of the relay")

        try assertLiveChat(address, from: "127.0.0.3", frames: 4)
        let offline = try offlinePair(address, from: "127.0.0.4")
        defer { offline.a.close() }
        for _ in 0..<4 {
            let seq = try offline.a.send(on: offline.link, Self.big)
            XCTAssertEqual(offline.a.nextEvent(timeout: 10), .sent(seq: seq, forwarded: false), "an offline user is still sent held frames")
        }
    }

    /// Many hosts within their budgets fill the relay: held frames are then refused, and
    /// live chat between two connected users still goes.
    func testLiveForwardingGoesOnWhenTheRelayIsFull() throws {
        let maxHeld = 2 << 20
        let address = try relay.start(["--max-held-bytes", String(maxHeld)])
        for host in 2...5 {
            for _ in 0..<2 {
                let pair = try offlinePair(address, from: "127.0.0.\(host)")
                let (taken, _) = try sendUntilRefused(pair.a, on: pair.link, limit: 4)
                XCTAssertEqual(taken, 4)
                pair.a.close()
            }
        }
        let late = try offlinePair(address, from: "127.0.0.6")
        defer { late.a.close() }
        XCTAssertEqual(try sendUntilRefused(late.a, on: late.link, limit: 1).refusal, .relayFull, "the relay is full")
        try assertLiveChat(address, from: "127.0.0.7", frames: 4)
    }

    /// `--max-held-bytes-per-sender` and `--max-held-bytes-per-host` refuse as a full relay
    /// does, and the counts come back at a `--persist` load.
    func testThePerSenderAndPerHostBudgetsRefuseAndSurviveARestart() throws {
        let big = Self.big.count
        let options = ["--persist", relay.persistPath, "--max-held-bytes-per-sender", String(4 * big), "--max-held-bytes-per-host", String(6 * big)]
        var address = try relay.start(options)
        let first = try offlinePair(address, from: "127.0.0.2")
        var result = try sendUntilRefused(first.a, on: first.link, limit: 10)
        XCTAssertEqual(result.taken, 4)
        XCTAssertEqual(result.refusal, .relayFull, "the sender's budget")
        let second = try offlinePair(address, from: "127.0.0.2")
        result = try sendUntilRefused(second.a, on: second.link, limit: 10)
        XCTAssertEqual(result.taken, 2)
        XCTAssertEqual(result.refusal, .relayFull, "the host's budget")
        let other = try offlinePair(address, from: "127.0.0.3")
        XCTAssertEqual(try sendUntilRefused(other.a, on: other.link, limit: 1).taken, 1, "another host has its own")
        for c in [first.a, second.a, other.a] { c.close() }
        relay.stop(signal: SIGKILL)

        address = try relay.start(options, samePort: true)
        for (pair, sender) in [(second, "127.0.0.2"), (other, "127.0.0.3")] {
            // Linked again; B goes at once, leaving what it was handed unacknowledged.
            let a = try RelayClient.connect(to: address, mailboxKey: pair.keyA, from: sender)
            defer { a.close() }
            let b = try RelayClient.connect(to: address, mailboxKey: pair.keyB, from: "127.0.0.9")
            let code = Random.bytes(32)
            try a.present([code])
            try b.present([code])
            var linkID: LinkID?
            while linkID == nil, let e = a.nextEvent(timeout: 5) { if case .linked(let l, _) = e { linkID = l } }
            b.close()
            guard let linkID else { return XCTFail("not linked again") }
            result = try sendUntilRefused(a, on: linkID, limit: 1)
            if sender == "127.0.0.2" {
                XCTAssertEqual(result.refusal, .relayFull, "the host's held bytes were counted again at load")
            } else {
                XCTAssertEqual(result.taken, 1, "the other host had room left")
            }
        }
    }
}
