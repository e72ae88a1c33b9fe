import XCTest
import RChatCore

final class SteadyTrafficTests: XCTestCase {
    func testSlotsAreTheMeanWithinThirtyPercentAndOffHasNone() {
        XCTAssertEqual(SteadyTraffic.normal.slotSeconds(uniform: 0)!, 1.4, accuracy: 1e-9)
        XCTAssertEqual(SteadyTraffic.normal.slotSeconds(uniform: 0.5)!, 2, accuracy: 1e-9)
        XCTAssertEqual(SteadyTraffic.normal.slotSeconds(uniform: 0.999_999)!, 2.6, accuracy: 1e-5)
        XCTAssertEqual(SteadyTraffic.low.slotSeconds(uniform: 0)!, 7, accuracy: 1e-9)
        XCTAssertEqual(SteadyTraffic.low.slotSeconds(uniform: 1)!, 13, accuracy: 1e-9)
        XCTAssertNil(SteadyTraffic.off.slotSeconds(uniform: 0.5))
        XCTAssertNil(SteadyTraffic.off.coverSeconds(uniform: 0.5))
        XCTAssertEqual(SteadyTraffic.default, .normal)
    }

    func testCoverIntervalsAreExponentialWithTheSameMeanAndCapped() {
        XCTAssertEqual(SteadyTraffic.normal.coverSeconds(uniform: 0)!, 0, accuracy: 1e-9)
        XCTAssertEqual(SteadyTraffic.normal.coverSeconds(uniform: 1 - exp(-1))!, 2, accuracy: 1e-9)
        XCTAssertEqual(SteadyTraffic.normal.coverSeconds(uniform: 1)!, 20, accuracy: 1e-9)
        // The mean over an even spread of draws is the slot's mean.
        let n = 100_000
        let mean = (0..<n).map { SteadyTraffic.low.coverSeconds(uniform: (Double($0) + 0.5) / Double(n))! }.reduce(0, +) / Double(n)
        XCTAssertEqual(mean, 10, accuracy: 0.1)
    }

    func testASlotWithARealFrameSendsNoDummyAndAnEmptyOneDoes() {
        var pace = SteadyPace.slot(endsAt: 10, used: false)
        XCTAssertEqual(pace.tick(now: 9.9, nextLength: { 2 }).slotEnded, false)
        XCTAssertEqual(pace.tick(now: 10, nextLength: { 2 }).sendDummy, true)
        XCTAssertEqual(pace, .slot(endsAt: 12, used: false))
        pace.used()
        let used = pace.tick(now: 12.01, nextLength: { 1.5 })
        XCTAssertTrue(used.slotEnded)
        XCTAssertFalse(used.sendDummy)
        XCTAssertEqual(pace.endsAt, 13.5)
    }

    func testAMissedSlotStartsAfreshInsteadOfABurst() {
        var pace = SteadyPace.slot(endsAt: 10, used: false)
        XCTAssertTrue(pace.tick(now: 100, nextLength: { 2 }).sendDummy)
        XCTAssertEqual(pace.endsAt, 102)
        XCTAssertFalse(pace.tick(now: 101, nextLength: { 2 }).slotEnded)
    }

    func testAStoppedPaceDoesNothing() {
        var pace = SteadyPace.stopped
        pace.used()
        XCTAssertEqual(pace, .stopped)
        XCTAssertFalse(pace.tick(now: 1e9, nextLength: { 2 }).slotEnded)
        XCTAssertNil(pace.endsAt)
    }

    func testWhileAFileGoesSlotsAreFiftyTimesShorterWithTheSameJitter() {
        XCTAssertEqual(SteadyTraffic.normal.transferSlotSeconds(uniform: 0)!, 1.4 / 50, accuracy: 1e-9)
        XCTAssertEqual(SteadyTraffic.normal.transferSlotSeconds(uniform: 0.5)!, 0.04, accuracy: 1e-9)
        XCTAssertEqual(SteadyTraffic.normal.transferSlotSeconds(uniform: 1)!, 2.6 / 50, accuracy: 1e-9)
        XCTAssertEqual(SteadyTraffic.low.transferSlotSeconds(uniform: 0.5)!, 0.2, accuracy: 1e-9)
        XCTAssertNil(SteadyTraffic.off.transferSlotSeconds(uniform: 0.5))
    }

    /// Every combination of what waits and whether a real frame went in the slot.
    func testASlotsEndTriesReceiptsThenChunksThenADummyOnlyWhereNothingRealWent() {
        let expected: [(SlotWaiting, Bool, [SlotFrame])] = [
            (SlotWaiting(), false, [.dummy]),
            (SlotWaiting(), true, []),
            (SlotWaiting(receipts: true), false, [.receipt, .dummy]),
            (SlotWaiting(receipts: true), true, [.receipt]),
            (SlotWaiting(chunks: true), false, [.chunk, .dummy]),
            (SlotWaiting(chunks: true), true, [.chunk]),
            (SlotWaiting(receipts: true, chunks: true), false, [.receipt, .chunk, .dummy]),
            (SlotWaiting(receipts: true, chunks: true), true, [.receipt, .chunk]),
        ]
        for (waiting, used, frames) in expected {
            XCTAssertEqual(SteadyPace.slotFrames(waiting, slotUsed: used), frames, "\(waiting), used: \(used)")
        }
    }
}
