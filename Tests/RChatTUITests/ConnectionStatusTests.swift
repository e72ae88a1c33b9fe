import XCTest
import RChatCore
@testable import RChatTUI

/// The status bar tells the truth about the relay: the engine says "offline, retrying in
/// N s" once and the view counts down on its own clock, redrawing once a second only while
/// the countdown shows; a relay that leaves an acknowledgement overdue is not "Online";
/// `/reconnect` asks the engine to try now.
final class ConnectionStatusTests: XCTestCase {
    private func statusLine(_ view: ChatView) -> String { view.frame().line(22) }

    func testOfflineCountsDownFromTheRetryTimeItWasToldWithoutAskingTheEngineAgain() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        XCTAssertNil(view.nextDeadline, "idle while online: no timer")
        view.handle([.connectionChanged(.offline(retryIn: 5))])
        model.connectionState = .online   // what the model says now is not asked: the event was enough
        XCTAssertTrue(statusLine(view).hasPrefix(" Offline, retrying in 5 s"), statusLine(view))
        XCTAssertEqual(view.nextDeadline, model.clock + 1, "redraws at the next second")
        for left in [4, 3, 2, 1] {
            model.clock += 1
            XCTAssertTrue(statusLine(view).hasPrefix(" Offline, retrying in \(left) s"), statusLine(view))
            XCTAssertEqual(view.nextDeadline, model.clock + 1)
        }
        model.clock += 1
        XCTAssertTrue(statusLine(view).hasPrefix(" Offline, retrying…"), statusLine(view))
        XCTAssertNil(view.nextDeadline, "no timer once the countdown is over")
        model.clock += 30
        XCTAssertTrue(statusLine(view).hasPrefix(" Offline, retrying…"), statusLine(view))
    }

    func testAnEngineThatDoesNotRetryShowsOfflineWithoutATimer() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.handle([.connectionChanged(.offline(retryIn: 0))])
        XCTAssertTrue(statusLine(view).hasPrefix(" Offline "), statusLine(view))
        XCTAssertNil(view.nextDeadline)
    }

    func testABannerAndTheCountdownShareTheEarliestDeadline() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.handle([.connectionChanged(.offline(retryIn: 8))])
        view.state.banner = Banner(text: "Sam: hi", until: model.clock + 3)
        XCTAssertEqual(view.nextDeadline, model.clock + 1)
        view.handle([.connectionChanged(.online)])
        XCTAssertEqual(view.nextDeadline, model.clock + 3, "only the banner's deadline once online")
    }

    func testAStalledRelayIsNotShownOnlineAndAnswersClearIt() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        XCTAssertTrue(statusLine(view).hasPrefix(" Online"), statusLine(view))
        view.handle([.connectionChanged(.stalled)])
        let stalled = statusLine(view)
        XCTAssertTrue(stalled.hasPrefix(" Relay not answering"), stalled)
        XCTAssertFalse(stalled.contains("Online"), stalled)
        XCTAssertNil(view.nextDeadline, "no timer for a stalled relay")
        view.handle([.connectionChanged(.online)])
        XCTAssertTrue(statusLine(view).hasPrefix(" Online"), statusLine(view))
    }

    /// An engine that stopped for good (its disk failed) is shown as stopped, with why, never
    /// as offline and retrying; /reconnect says to start again instead of showing Connecting.
    func testAStoppedEngineIsShownStoppedWithWhyAndReconnectSaysToStartAgain() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.handle([.connectionChanged(.stopped(reason: "Database or disk is full."))])
        let stopped = statusLine(view)
        XCTAssertTrue(stopped.hasPrefix(" Stopped (restart rChat): Database or disk is full."), stopped)
        XCTAssertNil(view.nextDeadline, "no countdown: nothing retries")
        view.type("/reconnect")
        view.press(.enter)
        XCTAssertEqual(model.reconnects, 0)
        XCTAssertTrue(statusLine(view).hasPrefix(" Stopped"), statusLine(view))
        XCTAssertTrue(statusLine(view).contains("Quit and start again."), statusLine(view))
    }

    func testReconnectAsksTheModelAndShowsConnecting() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.handle([.connectionChanged(.offline(retryIn: 30))])
        view.type("/reconnect")
        view.press(.enter)
        XCTAssertEqual(model.reconnects, 1)
        XCTAssertTrue(model.sent.isEmpty, "a command, not a message")
        let line = statusLine(view)
        XCTAssertTrue(line.hasPrefix(" Connecting…"), line)
        XCTAssertTrue(line.contains("Reconnecting now."), line)
        XCTAssertNil(view.nextDeadline, "the countdown stopped")
    }
}
