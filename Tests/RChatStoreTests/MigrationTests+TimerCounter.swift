import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// A timer set before changes carried a counter (schema step 13): it is in force as counter
/// 0, ordered among such changes by id as before, and any change with a counter comes after.
extension MigrationTests {
    func testATimerSetBeforeCountersIsCounterZero() throws {
        let steps = Array(Migrations.all.prefix { !$0.sql.contains("timer_counter") })
        XCTAssertEqual(steps.count, 12, "the counter is step 13")
        let old = try Store(path: path, migrations: steps)
        let sam = try StoreTestCase.addContactAsBefore(old, StoreTestCase.newContact("Sam"), at: 1_000)
        let farAhead = MessageID(high: .max, low: .max)
        try old.database.execute("UPDATE contacts SET timer_seconds = 0, timer_set_by = ? WHERE id = ?",
                                 [.blob(farAhead.bytes), .integer(sam.rawValue)])
        old.close()

        let store = try Store(path: path)
        defer { store.close() }
        let before = try store.conversationTimer(contact: sam)
        XCTAssertEqual(before.timer, .off)
        XCTAssertEqual(before.setBy, TimerPolicy.Change(counter: 0, id: farAhead))
        XCTAssertFalse(try store.applyTimer(.oneDay, setBy: TimerPolicy.Change(counter: 0, id: MessageID(high: 1, low: 0)), contact: sam),
                       "an older rChat's change is ordered by id, as before")
        let next = try XCTUnwrap(TimerPolicy.next(after: before.setBy))
        let mine = TimerPolicy.Change(counter: next, id: MessageID(high: 1, low: 1))
        XCTAssertTrue(try store.applyTimer(.oneHour, setBy: mine, contact: sam), "a change with a counter comes after it")
        let after = try store.conversationTimer(contact: sam)
        XCTAssertEqual(after.timer, .oneHour)
        XCTAssertEqual(after.setBy, mine)
    }
}
