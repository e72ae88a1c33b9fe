import XCTest
import RChatCore
import RChatStore
@testable import RChatEngine

/// `SessionTraffic`: the one list of what a session's end forgets.
final class SessionTrafficTests: XCTestCase {
    /// Every field holds something.
    private func full() -> SessionTraffic {
        var t = SessionTraffic()
        let row = MessageRowID(7), id = MessageID.random()
        t.sent = [row]
        t.chunksInFlight = [row: [0, 1]]
        t.fileReceiptsInFlight = [id]
        t.peerFileProgress = [row: (chunks: 3, at: 1.5)]
        t.deliveredInFlight.sent(seq: 4, through: 9)
        t.readReceiptsInFlight = [id]
        t.noticeInFlight = [id]
        t.startedOverNoticeInFlight = true
        t.groupDeliveredInFlight = [ConversationID(-1): 5]
        return t
    }

    /// A field added to the list is added here too: `isEmpty` and these tests see every one.
    func testTheListHasNineFieldsAndAFullOneIsNotEmpty() {
        XCTAssertEqual(Mirror(reflecting: SessionTraffic()).children.count, 9)
        XCTAssertTrue(SessionTraffic().isEmpty)
        XCTAssertFalse(full().isEmpty)
    }

    /// The link dropped, given up, or the run ended: nothing of the session is left.
    func testAnEndedSessionForgetsEverything() {
        var t = full()
        t.forget(.ended)
        XCTAssertTrue(t.isEmpty)
        XCTAssertNil(t.deliveredInFlight.sentThrough, "Delivered receipts go again from the store's mark")
    }

    /// A new session in its place: everything but the notice the relay has not answered.
    func testAReplacedSessionKeepsOnlyTheNoticeInFlight() {
        var t = full()
        let notice = t.noticeInFlight
        t.forget(.replaced)
        XCTAssertEqual(t.noticeInFlight, notice)
        XCTAssertTrue(t.startedOverNoticeInFlight)
        t.noticeInFlight = []
        t.startedOverNoticeInFlight = false
        XCTAssertTrue(t.isEmpty, "the rest is forgotten")
    }
}
