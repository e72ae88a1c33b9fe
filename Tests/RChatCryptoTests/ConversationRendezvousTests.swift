import XCTest
import RChatCore
@testable import RChatCrypto

final class ConversationRendezvousTests: XCTestCase {
    let pair = ConvPair.make(1)
    lazy var alice = pair.initiator.conversation(with: pair.responder)
    lazy var bob = pair.responder.conversation(with: pair.initiator)
    /// Noon of some day, so ±12 h stays within that day.
    let noon: Int64 = 19_700 * 86_400 + 43_200

    private func meet(_ a: [RendezvousCode], _ b: [RendezvousCode]) -> Bool {
        !Set(a.map(\.bytes)).isDisjoint(with: Set(b.map(\.bytes)))
    }

    func testCodeIsKeyedBLAKE2bOfDayAndCounter() {
        var m = ByteWriter()
        m.raw(Array("rv".utf8)); m.u64(19_700); m.u64(7)
        XCTAssertEqual(RendezvousCode.reconnect(alice, day: 19_700, counter: 7).bytes, Hash.blake2b(m.bytes, key: alice.key))
        XCTAssertEqual(RendezvousCode.reconnect(alice, day: 19_700, counter: 7), RendezvousCode.reconnect(bob, day: 19_700, counter: 7))
        XCTAssertEqual(RendezvousCode.day(at: 0), 0)
        XCTAssertEqual(RendezvousCode.day(at: 86_399), 0)
        XCTAssertEqual(RendezvousCode.day(at: 86_400), 1)
        XCTAssertEqual(RendezvousCode.day(at: -5), 0)
    }

    /// Two sides with saved state, by counter and clock: counter codes alone meet exactly when
    /// the counters are equal and the clocks within two days.
    func testEstablishedSidesMeetByCounter() {
        let cases: [(name: String, a: UInt64, b: UInt64, bClockOffset: Int64, meet: Bool)] = [
            ("same counter", 5, 5, 0, true),
            ("b one ahead", 5, 6, 0, false),
            ("a one ahead", 6, 5, 0, false),
            ("b's clock a day ahead", 5, 5, 86_400, true),
            ("b's clock a day behind", 5, 5, -86_400, true),
            ("just across midnight", 5, 5, 43_201, true),
            // Both windows are ±1 day, so up to two days of skew still meet.
            ("two days apart", 5, 5, 2 * 86_400, true),
            ("three days apart", 5, 5, 3 * 86_400, false),
            ("counter zero", 0, 0, 0, true),
            ("counter at the top", UInt64.max, UInt64.max, 0, true),
        ]
        for c in cases {
            let a = RendezvousCode.presented(for: alice, at: noon, .counter(c.a))
            let b = RendezvousCode.presented(for: bob, at: noon + c.bClockOffset, .counter(c.b))
            XCTAssertEqual(meet(a, b), c.meet, c.name)
            XCTAssertFalse(a.contains { $0.kind == .recovery }, "counter codes alone: no recovery code")
        }
        // Counters apart (one side failed to save): they meet once both add the recovery code.
        XCTAssertTrue(meet(RendezvousCode.presented(for: alice, at: noon, .counterAndRecovery(5)),
                           RendezvousCode.presented(for: bob, at: noon, .counterAndRecovery(6))))
    }

    func testSideWithoutStateMeetsEstablishedSideByRecoveryCode() {
        let cases: [(name: String, freshClockOffset: Int64, meet: Bool)] = [
            ("same time", 0, true),
            ("fresh side's clock a day ahead", 86_400, true),
            ("fresh side's clock a day behind", -86_400, true),
            ("two days apart", 2 * 86_400, false),
        ]
        for c in cases {
            let established = RendezvousCode.presented(for: alice, at: noon, .counterAndRecovery(42))
            let fresh = RendezvousCode.presented(for: bob, at: noon + c.freshClockOffset, .startedOver)
            XCTAssertEqual(meet(established, fresh), c.meet, c.name)
            XCTAssertTrue(fresh.allSatisfy { $0.kind == .recovery })
        }
        // Before the established side adds its recovery code, a side that started over is not found.
        XCTAssertFalse(meet(RendezvousCode.presented(for: alice, at: noon, .counter(42)),
                            RendezvousCode.presented(for: bob, at: noon, .startedOver)))
        // Both started over (a brand-new contact on both sides, or both reinstalled).
        XCTAssertTrue(meet(RendezvousCode.presented(for: alice, at: noon, .startedOver),
                           RendezvousCode.presented(for: bob, at: noon, .startedOver)))
        XCTAssertEqual(RendezvousCode.Presentation.first(reconnectCounter: nil), .startedOver)
        XCTAssertEqual(RendezvousCode.Presentation.first(reconnectCounter: 3), .counter(3))
    }

    func testDifferentConversationsNeverCollide() {
        let other = ConvPair.make(60)
        let carol = other.initiator.conversation(with: other.responder)
        // Alice with a third account shares one key but not the conversation.
        let aliceAndCarol = pair.initiator.conversation(with: other.initiator)
        var codes: [Set<[UInt8]>] = [[], [], []]
        for (i, conversation) in [alice, carol, aliceAndCarol].enumerated() {
            for d in Int64(0)..<10 {
                for counter: UInt64? in [nil, 0, 1, 2, 3, 100] {
                    let presentation = counter.map(RendezvousCode.Presentation.counterAndRecovery) ?? .startedOver
                    for code in RendezvousCode.presented(for: conversation, at: noon + d * 86_400, presentation) {
                        codes[i].insert(code.bytes)
                    }
                }
            }
        }
        XCTAssertTrue(codes[0].isDisjoint(with: codes[1]))
        XCTAssertTrue(codes[0].isDisjoint(with: codes[2]))
        XCTAssertTrue(codes[1].isDisjoint(with: codes[2]))
    }

    func testPresentedSetIsSmallDistinctAndChangesDaily() {
        for presentation: RendezvousCode.Presentation in [.startedOver, .counter(0), .counterAndRecovery(9)] {
            let today = RendezvousCode.presented(for: alice, at: noon, presentation)
            XCTAssertLessThanOrEqual(today.count, 16)
            XCTAssertEqual(Set(today.map(\.bytes)).count, today.count, "no duplicates")
            XCTAssertTrue(today.allSatisfy { $0.bytes.count == RendezvousCode.byteCount })
            // Three days on, nothing repeats: links on different days look unrelated.
            let later = RendezvousCode.presented(for: alice, at: noon + 3 * 86_400, presentation)
            XCTAssertTrue(Set(today.map(\.bytes)).isDisjoint(with: Set(later.map(\.bytes))))
        }
        XCTAssertEqual(RendezvousCode.presented(for: alice, at: noon, .counter(3)).count, 3)
        XCTAssertEqual(RendezvousCode.presented(for: alice, at: noon, .counterAndRecovery(3)).count, 4)
        XCTAssertEqual(RendezvousCode.presented(for: alice, at: noon, .startedOver).count, 3)
        XCTAssertEqual(RendezvousCode.presented(for: alice, at: 100, .startedOver).count, 2, "day 0 has no day before")
    }

    func testNextCounterRule() {
        let cases: [(mine: UInt64?, peers: UInt64?, next: UInt64)] = [
            (0, 0, 1), (5, 5, 6), (5, 6, 7), (6, 5, 7), (nil, 7, 8), (7, nil, 8), (nil, nil, 1),
        ]
        for c in cases {
            XCTAssertEqual(ReconnectCounter.next(mine: c.mine, peers: c.peers), c.next, "\(String(describing: c.mine)), \(String(describing: c.peers))")
            XCTAssertEqual(ReconnectCounter.next(mine: c.mine, peers: c.peers), ReconnectCounter.next(mine: c.peers, peers: c.mine))
        }
    }

    /// Sessions in a row where either side may crash before saving the new counter. Every
    /// time the two sides meet: on counter codes alone when both saved the last session,
    /// else once both add today's recovery code. And a side that saved never presents a
    /// counter code it presented at an earlier reconnect, so a relay cannot link two
    /// reconnects of the pair by a code they share.
    func testSidesAlwaysMeetAndNoCounterCodeIsPresentedOnTwoReconnects() {
        // Each step: (alice saves, bob saves). Every pattern of length 5.
        for pattern in 0..<(1 << 10) {
            var a: UInt64 = 0, b: UInt64 = 0
            var aSaved = true, bSaved = true
            var presentedByA: Set<[UInt8]> = [], presentedByB: Set<[UInt8]> = []
            for step in 0..<5 {
                let codesA = RendezvousCode.presented(for: alice, at: noon, .counter(a))
                let codesB = RendezvousCode.presented(for: bob, at: noon, .counter(b))
                if aSaved { XCTAssertTrue(presentedByA.isDisjoint(with: codesA.map(\.bytes)), "pattern \(pattern) step \(step): Alice repeats a code") }
                if bSaved { XCTAssertTrue(presentedByB.isDisjoint(with: codesB.map(\.bytes)), "pattern \(pattern) step \(step): Bob repeats a code") }
                presentedByA.formUnion(codesA.map(\.bytes)); presentedByB.formUnion(codesB.map(\.bytes))
                if aSaved && bSaved {
                    guard meet(codesA, codesB) else { return XCTFail("pattern \(pattern) step \(step): \(a) vs \(b) do not meet by counter") }
                } else if !meet(codesA, codesB) {
                    let withRecoveryA = RendezvousCode.presented(for: alice, at: noon, .counterAndRecovery(a))
                    let withRecoveryB = RendezvousCode.presented(for: bob, at: noon, .counterAndRecovery(b))
                    guard meet(withRecoveryA, withRecoveryB) else { return XCTFail("pattern \(pattern) step \(step): \(a) vs \(b) never meet") }
                }
                let next = ReconnectCounter.next(mine: a, peers: b)
                aSaved = pattern >> (2 * step) & 1 == 1
                bSaved = pattern >> (2 * step + 1) & 1 == 1
                if aSaved { a = next }
                if bSaved { b = next }
            }
        }
    }
}
