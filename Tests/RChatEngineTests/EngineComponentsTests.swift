import XCTest
import RChatCore
@testable import RChatEngine
import RChatStore

/// The components' own deadlines: `Engine.nextTimer` is the earliest of them.
final class EngineComponentsTests: XCTestCase {
    func testReceiptsGoAtTheEarliestTimeAskedAndAFlushClearsIt() {
        var receipts = ReceiptSchedule()
        XCTAssertEqual(receipts.nextDeadline, .infinity)
        XCTAssertFalse(receipts.isDue(at: 1_000))
        receipts.schedule(at: 10.2)
        receipts.schedule(at: 11)      // a later ask does not postpone it
        XCTAssertEqual(receipts.nextDeadline, 10.2)
        receipts.schedule(at: 10)      // an urgent one brings it forward
        XCTAssertEqual(receipts.nextDeadline, 10)
        XCTAssertFalse(receipts.isDue(at: 9.99))
        XCTAssertTrue(receipts.isDue(at: 10))
        receipts.taken()
        XCTAssertEqual(receipts.nextDeadline, .infinity)
    }

    func testTheOutboxSweepComesASecondAfterTheLastWhileABackoffWaits() {
        var sweep = OutboxSweep(last: 5)
        XCTAssertEqual(sweep.nextDeadline(pending: false), .infinity, "no backoff waits: no sweep")
        XCTAssertEqual(sweep.nextDeadline(pending: true), 6)
        XCTAssertFalse(sweep.due(at: 5.99))
        XCTAssertTrue(sweep.due(at: 6), "due at its own deadline")
        XCTAssertFalse(sweep.due(at: 6.5), "it counted as done at 6")
        XCTAssertEqual(sweep.nextDeadline(pending: true), 7)
        // A deadline whose sum rounds: due when it says, so the engine never spins on it.
        var odd = OutboxSweep(last: 0.1 + 0.2)
        XCTAssertTrue(odd.due(at: odd.nextDeadline(pending: true)))
    }

    func testTheStoreIsLookedAtEveryThreeSecondsAsABackstop() {
        var watch = StoreWatch(lastLook: 3.4947373396359325)
        XCTAssertEqual(watch.nextDeadline, 3.4947373396359325 + Engine.storeLookInterval)
        watch.lastLook = 10
        XCTAssertEqual(watch.nextDeadline, 13)
    }

    func testAcknowledgementsAreDueAtTheEarliestDeadline() {
        var acks = AcknowledgementDeadlines()
        XCTAssertEqual(acks.earliest, .infinity)
        acks.expect(MessageRowID(1), by: 20)
        acks.expect(MessageRowID(2), by: 25)
        acks.expect(MessageRowID(1), by: 30)   // an earlier one stays
        XCTAssertEqual(acks.earliest, 20)
        XCTAssertEqual(acks.takeOverdue(at: 19.9), [])
        acks.answered(MessageRowID(1))
        XCTAssertEqual(acks.earliest, 20, "may wake early: nothing is overdue then")
        XCTAssertEqual(acks.takeOverdue(at: 20), [])
        XCTAssertEqual(acks.earliest, 25, "exact again once it passed")
        acks.expect(MessageRowID(3), by: 26)
        acks.expect(MessageRowID(4), by: 40)
        XCTAssertEqual(acks.takeOverdue(at: 26), [MessageRowID(2), MessageRowID(3)])
        XCTAssertEqual(acks.earliest, 40)
        XCTAssertEqual(acks.deadlines, [MessageRowID(4): 40])
    }

    private final class Timers: ExpirySource {
        var changesWritten: Int64 = 0
        var earliest: Int64?
        var reads = 0
        func earliestExpiry() throws -> Int64? { reads += 1; return earliest }
    }

    func testTheFirstDisappearingTimerIsTheExpiryDeadlineAtMostThirtySecondsAway() throws {
        var watch = ExpiryWatch()
        let store = Timers()
        XCTAssertEqual(watch.nextDeadline(ticks: 100, nowMilliseconds: 1_000_000), .infinity, "never read: nothing known")
        try watch.refresh(store)
        XCTAssertEqual(store.reads, 1)
        XCTAssertEqual(watch.nextDeadline(ticks: 100, nowMilliseconds: 1_000_000), .infinity, "nothing with a timer")
        // A timer set by this connection: read again because it wrote.
        store.earliest = 1_010
        try watch.refresh(store)
        XCTAssertEqual(store.reads, 1, "nothing written since: not read again")
        store.changesWritten = 3
        try watch.refresh(store)
        XCTAssertEqual(watch.nextDeadline(ticks: 100, nowMilliseconds: 1_000_000), 110, "ten seconds of wall clock from now")
        XCTAssertFalse(watch.isDue(now: 1_009))
        XCTAssertTrue(watch.isDue(now: 1_010))
        XCTAssertEqual(watch.nextDeadline(ticks: 100, nowMilliseconds: 1_020_000), 100, "overdue: now")
        XCTAssertEqual(watch.nextDeadline(ticks: 100, nowMilliseconds: 1_009_750), 100.25,
                       "a quarter second before it runs out, read late in a second: not a second late")
        XCTAssertTrue(watch.isDue(now: 1_009_750 / 1000 + 1), "due at that deadline")
        // Far away: looked at again within 30 s, in case the wall clock jumps.
        store.earliest = 1_000_000
        store.changesWritten = 4
        try watch.refresh(store)
        XCTAssertEqual(watch.nextDeadline(ticks: 100, nowMilliseconds: 1_000_000), 100 + ExpiryWatch.recheck)
        // Another process set one: forgotten, read again without a write of this connection.
        store.earliest = 1_005
        watch.forget()
        try watch.refresh(store)
        XCTAssertEqual(store.reads, 4)
        XCTAssertEqual(watch.nextDeadline(ticks: 100, nowMilliseconds: 1_000_000), 105)
    }

    func testConnectionsAreDueAtTheNextAttemptOrPingOrPresentation() throws {
        let connections = Connections()
        XCTAssertEqual(min(connections.nextAttempt, connections.nextPing, connections.nextPresentation), .infinity, "no relay, nothing due")
        let a = RelayConnection(address: try RelayAddress(parsing: "127.0.0.1:9/" + String(repeating: "A", count: 43)))
        let b = RelayConnection(address: try RelayAddress(parsing: "127.0.0.1:10/" + String(repeating: "A", count: 43)))
        connections[a.address] = a
        connections[b.address] = b
        a.retryAt = 40
        b.retryAt = 30
        XCTAssertEqual(connections.nextAttempt, 30)
        XCTAssertEqual(connections.nextPing, .infinity, "offline: no ping due")
        b.connecting = true            // an attempt under way is not due again
        XCTAssertEqual(connections.nextAttempt, 40)
        a.coverAt = 12
        XCTAssertEqual(connections.nextCover, 12)
    }
}
