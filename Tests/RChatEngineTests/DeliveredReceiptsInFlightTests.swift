import XCTest
@testable import RChatEngine

/// The store's Delivered mark moves only over frames the relay took with nothing earlier
/// still open: each row is frames sent (seq → through), then answers, and where the mark
/// may move after each answer.
final class DeliveredReceiptsInFlightTests: XCTestCase {
    enum Answer { case taken(UInt64), forgetAll }

    func testTheMarkMovesOnlyOverAPrefixTheRelayTook() {
        let sent: [(UInt64, Int64)] = [(1, 10), (2, 20), (3, 30)]
        let rows: [(answers: [Answer], marks: [Int64?], line: UInt)] = [
            ([.taken(1), .taken(2), .taken(3)], [10, 20, 30], #line),
            ([.taken(2), .taken(1), .taken(3)], [nil, 20, 30], #line),
            ([.taken(3), .taken(2), .taken(1)], [nil, nil, 30], #line),
            ([.taken(1), .taken(1), .taken(2)], [10, nil, 20], #line),
            ([.taken(9), .taken(1)], [nil, 10], #line),
            // A refusal: what was open goes again from the store's mark; late answers to
            // forgotten frames move nothing.
            ([.taken(2), .forgetAll, .taken(1), .taken(3)], [nil, nil, nil, nil], #line),
            ([.taken(1), .forgetAll, .taken(2)], [10, nil, nil], #line),
        ]
        for row in rows {
            var inFlight = DeliveredReceiptsInFlight()
            for (seq, through) in sent { inFlight.sent(seq: seq, through: through) }
            XCTAssertEqual(inFlight.sentThrough, 30, line: row.line)
            var marks: [Int64?] = []
            for answer in row.answers {
                switch answer {
                case .taken(let seq): marks.append(inFlight.taken(seq: seq))
                case .forgetAll: inFlight.forgetAll(); marks.append(nil)
                }
            }
            XCTAssertEqual(marks, row.marks, line: row.line)
        }
    }

    func testAfterForgettingTheNextFlushStartsFromTheStoresMark() {
        var inFlight = DeliveredReceiptsInFlight()
        XCTAssertNil(inFlight.sentThrough)
        inFlight.sent(seq: 7, through: 64)
        inFlight.sent(seq: 8, through: 128)
        XCTAssertEqual(inFlight.sentThrough, 128)
        XCTAssertFalse(inFlight.isEmpty)
        inFlight.forgetAll()
        XCTAssertNil(inFlight.sentThrough)
        XCTAssertTrue(inFlight.isEmpty)
        // Frames sent again after the refusal are settled by their own answers.
        inFlight.sent(seq: 9, through: 128)
        XCTAssertNil(inFlight.taken(seq: 8))
        XCTAssertEqual(inFlight.taken(seq: 9), 128)
        XCTAssertTrue(inFlight.isEmpty)
    }
}
