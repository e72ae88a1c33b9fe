import XCTest
import RChatCore
import RChatStore
@testable import RChatEngine

/// The Delivered receipts owed for what this run stored, known without a query — and only
/// where nothing can be missing.
final class StoredThisRunTests: XCTestCase {
    private func owed(_ positions: ClosedRange<Int64>) -> [OwedDelivered] {
        positions.map { OwedDelivered(id: MessageID(bytes: [UInt8](repeating: UInt8($0 % 250), count: 16))!, position: $0) }
    }

    func testAnswersOnlyAboveWhatItHoldsCompletely() {
        var run = StoredThisRun()
        XCTAssertNil(run.owed(after: 0, limit: 10), "nothing stored this run: the store answers")
        run.stored(owed(11...20))
        XCTAssertNil(run.owed(after: 5, limit: 10), "6…10 may be owed and are not held here")
        XCTAssertEqual(run.owed(after: 10, limit: 4)?.map(\.position), [11, 12, 13, 14])
        XCTAssertEqual(run.owed(after: 14, limit: 100)?.map(\.position), Array(15...20))
        run.stored(owed(23...25))  // 21, 22: outgoing messages or system rows between
        XCTAssertEqual(run.owed(after: 20, limit: 100)?.map(\.position), [23, 24, 25])
        XCTAssertNil(run.owed(after: 12, limit: 100), "below what it last answered for: let go")
        XCTAssertEqual(run.owed(after: 25, limit: 100)?.map(\.position), [])
    }

    func testAMessageStoredAnotherWayOrOutOfOrderHandsBackToTheStore() {
        var run = StoredThisRun()
        run.stored(owed(1...5))
        run.invalidate()
        XCTAssertNil(run.owed(after: 5, limit: 10))
        run.stored(owed(8...9))
        XCTAssertEqual(run.owed(after: 7, limit: 10)?.map(\.position), [8, 9])
        run.stored(owed(9...10))
        XCTAssertNil(run.owed(after: 9, limit: 10), "positions going back: not to be trusted")
    }

    func testLetsGoPastItsCapacity() {
        var run = StoredThisRun()
        run.stored(owed(1...Int64(StoredThisRun.capacity)))
        XCTAssertEqual(run.owed(after: 0, limit: 1)?.first?.position, 1)
        run.stored(owed(Int64(StoredThisRun.capacity + 1)...Int64(StoredThisRun.capacity + 2)))
        XCTAssertNil(run.owed(after: 0, limit: 1), "over capacity: the store answers")
    }
}
