import XCTest
import RChatCore
@testable import RChatEngine

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

    func testTheOutboxSweepComesOnceMoreThanASecondPassed() {
        var sweep = OutboxSweep(last: 5)
        XCTAssertFalse(sweep.due(at: 6), "a second exactly is not more than a second")
        XCTAssertTrue(sweep.due(at: 6.01))
        XCTAssertFalse(sweep.due(at: 6.5), "it counted as done at 6.01")
        XCTAssertTrue(sweep.due(at: 7.02))
    }

    func testConnectionsAreDueAtTheNextAttemptOrPingOrPresentation() throws {
        let connections = Connections()
        XCTAssertEqual(connections.nextDeadline, .infinity, "no relay, nothing due")
        let a = RelayConnection(address: try RelayAddress(parsing: "127.0.0.1:9/" + String(repeating: "A", count: 43)))
        let b = RelayConnection(address: try RelayAddress(parsing: "127.0.0.1:10/" + String(repeating: "A", count: 43)))
        connections[a.address] = a
        connections[b.address] = b
        a.retryAt = 40
        b.retryAt = 30
        XCTAssertEqual(connections.nextDeadline, 30)
        b.connecting = true            // an attempt under way is not due again
        XCTAssertEqual(connections.nextDeadline, 40)
        a.coverAt = 12
        XCTAssertEqual(connections.nextCover, 12)
    }
}
