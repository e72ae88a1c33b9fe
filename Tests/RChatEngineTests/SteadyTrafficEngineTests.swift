import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
@testable import RChatEngine

/// Steady traffic end to end: Alice's engine, with `steady-traffic normal`, in a session
/// with Sam played by a raw client of the relay protocol (his own keys) at a real relay, which
/// reads every frame Alice's engine sends on the link as the relay hands it over.
final class SteadyTrafficEngineTests: RelayEngineTestCase {
    typealias Seen = SeenFrame
    typealias RawSam = RawPeer

    /// Alice's engine (logging at debug) and Sam's raw client in a session with it.
    func aliceWithRawSam() throws -> (alice: AccountService, engine: EngineThread, sam: RawSam) {
        let address = try startRelay()
        let alice = try account("Alice", relay: address)
        let samAccount = try account("Sam", relay: address)
        let samIdentity = try samAccount.identity()
        _ = try alice.addContact(samIdentity.contactCode(device: samAccount.device), name: nil)
        try alice.setSetting("steady-traffic", "normal")
        let lines = logLines
        let engine = try Engine(account: AccountService(locations: alice.locations),
                                log: Logger(threshold: .debug, sink: { lines.append("Alice: \($0)") }))
        let thread = EngineThread(engine: engine)
        thread.start(name: "engine-Alice")
        engines.append(thread)

        let raw = try rawSessionStartingOver(as: samAccount, mailboxKey: samIdentity.mailboxKey, with: alice, relay: address)
        return (alice, thread, RawPeer(raw))
    }

    func testAnIdleSessionSendsOneDummyPerSlotWithinItsJitterAndABurstGoesAtOnce() throws {
        let (alice, engine, sam) = try aliceWithRawSam()
        try sayHi(sam)

        // Idle: a dummy in every slot, 2 s ± 30 %.
        let start = sam.seen.count
        try read(sam, "eight dummies", seconds: 40) { $0[start...].filter(\.isDummy).count >= 8 }
        let idle = sam.seen[start...]
        XCTAssertTrue(idle.allSatisfy(\.isDummy), "\(idle.map(\.kind))")
        let times = idle.map(\.at)
        let gaps = zip(times.dropFirst(), times).map { $0.timeIntervalSince($1) }
        // 1.4 to 2.6 s, with room for the relay's and the scheduler's delays on a busy machine.
        for gap in gaps { XCTAssertTrue((1.2...2.9).contains(gap), "a slot of \(gap) s: \(gaps)") }
        let mean = gaps.reduce(0, +) / Double(gaps.count)
        XCTAssertTrue((1.5...2.5).contains(mean), "mean slot \(mean) s: \(gaps)")

        // A burst of real frames goes at once, not one per slot.
        let sent = Date()
        for n in 1...5 { _ = try alice.send(to: "Sam", content: .text("burst \(n)")) }
        engine.engine.wake()
        let before = sam.seen.count
        try read(sam, "the burst", seconds: 20) { $0[before...].filter { $0.kind == .message }.count == 5 }
        let burst = sam.seen[before...].filter { $0.kind == .message }
        XCTAssertLessThan(burst.last!.at.timeIntervalSince(sent), 1.5, "five frames paced one per slot would take over 7 s")
        // The slot they went in sent no dummy: the dummies around the burst are two slots apart.
        try read(sam, "dummies after the burst", seconds: 20) { $0[before...].filter(\.isDummy).count >= 2 }
        let lastBefore = idle.last!.at
        let firstAfter = sam.seen[before...].first(where: \.isDummy)!.at
        if firstAfter > burst.last!.at {
            XCTAssertGreaterThan(firstAfter.timeIntervalSince(lastBefore), 2.6, "no dummy in the slot that carried the burst")
        }

        // To the relay, a text message, a receipt and a dummy are one length.
        let receipt = sam.seen.first { $0.kind == .receiptDelivered }!
        XCTAssertEqual(Set([receipt.payloadBytes, burst[0].payloadBytes, idle.first!.payloadBytes]), [Padding.payloadSizes[0]])
    }

    func testDummiesFromThePeerAndOwnCoverLeaveNoTrace() throws {
        let (alice, _, sam) = try aliceWithRawSam()
        try sayHi(sam)
        // Sam read Alice's receipt: his next frame brings a new ratchet key, and the DH step
        // it makes Alice take is stored (and synced) before she seals anything under it —
        // a dummy or not. The dummies after it change no key.
        try sam.send(.cover, [])
        // The receipt's settling and that step are the last writes: wait until nothing is
        // written for 3 s.
        var version = try alice.store.otherWritersVersion()
        var stableSince = Date()
        try untilDeadline("Alice's store is quiet", seconds: 30) {
            let now = try alice.store.otherWritersVersion()
            if now != version { version = now; stableSince = Date() }
            return Date().timeIntervalSince(stableSince) > 3
        }
        func dropped(_ kind: String) -> Int {
            logLines.all.compactMap { line -> Int? in
                guard line.contains("without a trace") else { return nil }
                let words = line.split(separator: " ")
                guard let i = words.firstIndex(where: { $0.hasPrefix(kind) }), i >= 1 else { return nil }
                return Int(words[i - 1])
            }.reduce(0, +)
        }
        let dummiesBefore = dropped("dummy"), ownBefore = dropped("cover")
        for _ in 1...6 { try sam.send(.cover, []) }
        try untilDeadline("Alice drops Sam's six dummies and two of her own cover frames", seconds: 30) {
            dropped("dummy") >= dummiesBefore + 6 && dropped("cover") >= ownBefore + 2
        }
        XCTAssertEqual(try alice.store.otherWritersVersion(), version, "no transaction committed for dummies or cover")
        XCTAssertEqual(try messages(alice, "Sam").map(\.text), ["hi"])
        XCTAssertEqual(try alice.conversationSummaries().map(\.unread), [1], "only Sam's message is unread")
        XCTAssertEqual(try rows(alice, "Sam").count, 0)
    }

    /// Issue 27, finding 4: a receipt goes at a slot's end in place of its dummy, never a
    /// moment after the message it confirms, so Alice's frames keep the slots' rhythm while
    /// Sam writes. (Before, each receipt went as soon as the message was stored: a frame
    /// tens of milliseconds after Sam's, whatever the slot.)
    func testReceiptsGoAtSlotEndsInPlaceOfDummies() throws {
        let (_, _, sam) = try aliceWithRawSam()
        try sayHi(sam)
        let start = sam.seen.count
        var delays: [Double] = []
        for n in 1...5 {
            // Just after one of Alice's dummies: today's receipt would follow it at once.
            try read(sam, "a dummy", seconds: 20) { $0[start...].filter(\.isDummy).count >= n }
            let sent = Date()
            try sam.send(text: "message \(n)")
            let receipts = sam.seen[start...].filter { $0.kind == .receiptDelivered }.count
            try read(sam, "the receipt for message \(n)", seconds: 20) { $0[start...].filter { $0.kind == .receiptDelivered }.count > receipts }
            delays.append(sam.seen.last { $0.kind == .receiptDelivered }!.at.timeIntervalSince(sent))
        }
        let frames = sam.seen[start...]
        XCTAssertTrue(frames.allSatisfy { $0.isDummy || $0.kind == .receiptDelivered }, "\(frames.map(\.kind))")
        let gaps = zip(frames.dropFirst(), frames).map { $0.at.timeIntervalSince($1.at) }
        // Slots are 1.4 to 2.6 s; the relay's and the scheduler's delays on a busy machine
        // take up to a few tenths.
        for gap in gaps { XCTAssertGreaterThan(gap, 1.0, "a frame off the slots' rhythm: \(gaps), receipts after \(delays)") }
        for delay in delays { XCTAssertLessThan(delay, 2.9, "a receipt later than a slot: \(delays)") }
        XCTAssertGreaterThan(delays.reduce(0, +) / Double(delays.count), 0.3, "receipts follow the messages at once: \(delays)")
    }
}
