import XCTest
import RChatCore
@testable import RChatTUI

/// `/timer` in the composer, its completion and help, and the timer in the header.
final class TimerViewTests: XCTestCase {
    private func run(_ view: ChatView, _ line: String) {
        view.type(line)
        view.press(.enter)
    }

    private func statusLine(_ screen: Screen) -> String { screen.line(screen.rows - 2) }

    func testAWordSetsTheTimerThroughTheModelAndTheHeaderShowsIt() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        XCTAssertFalse(view.frame().line(0).contains("timer"), "no timer: nothing in the header")
        run(view, "/timer 1h")
        XCTAssertEqual(model.timersSet.map(\.0), [model.id("Sam")])
        XCTAssertEqual(model.timersSet.map(\.1), [.oneHour])
        var screen = view.frame()
        XCTAssertTrue(statusLine(screen).contains("Disappearing messages set to 1 hour for you and Sam."), statusLine(screen))
        XCTAssertTrue(screen.line(0).contains("Sam · timer 1 hour"), screen.line(0))
        run(view, "/timer off")
        XCTAssertEqual(model.timersSet.map(\.1), [.oneHour, .off])
        screen = view.frame()
        XCTAssertTrue(statusLine(screen).contains("Disappearing messages turned off for you and Sam."), statusLine(screen))
        XCTAssertFalse(screen.line(0).contains("timer"), screen.line(0))
    }

    func testAnUnknownDurationIsRefusedInOneLineAndNothingIsSet() {
        let (model, _) = samConversation()
        let view = makeView(model, columns: 120, open: "Sam")
        for line in ["/timer 2h", "/timer 1 h", "/timer forever", "/timer 1h 5m"] {
            run(view, line)
            let screen = view.frame()
            XCTAssertEqual(view.state.notice, Notice(text: DisappearingTimer.wordsRefusal, isError: true), line)
            XCTAssertTrue(statusLine(screen).contains(DisappearingTimer.wordsRefusal), statusLine(screen))
        }
        XCTAssertTrue(model.timersSet.isEmpty)
        XCTAssertEqual(view.state.composer.text, "")
    }

    func testTimerAloneSaysTheCurrentOne() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        run(view, "/timer")
        XCTAssertTrue(statusLine(view.frame()).contains("Disappearing messages are off here"), statusLine(view.frame()))
        run(view, "/timer 8h")
        run(view, "/timer")
        XCTAssertTrue(statusLine(view.frame()).contains("Messages here disappear after 8 hours"), statusLine(view.frame()))
        XCTAssertEqual(model.timersSet.count, 1, "asking sets nothing")
    }

    func testTheModelRefusingAndNoOpenConversation() {
        let (model, _) = samConversation()
        model.failNextTimer = ChatModelError("Sam is blocked: unblock them first")
        let view = makeView(model, open: "Sam")
        run(view, "/timer 5m")
        XCTAssertTrue(statusLine(view.frame()).contains("Sam is blocked: unblock them first"))
        XCTAssertFalse(view.frame().line(0).contains("timer"))
        model.lastOpenConversation = nil   // a start with nothing open (not Sam reopened)
        let closed = makeView(model)
        run(closed, "/timer 5m")
        XCTAssertTrue(statusLine(closed.frame()).contains("Open a conversation first"), statusLine(closed.frame()))
        XCTAssertTrue(model.timersSet.isEmpty)
    }

    /// Set elsewhere (the contact, or `rchat timer`): the header follows the list.
    func testTheHeaderFollowsTheListInUnicodeAndASCII() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        let ascii = makeView(model, glyphs: .ascii, open: "Sam")
        model.summaries[0].timer = .oneWeek
        XCTAssertFalse(view.frame().line(0).contains("1 week"), "not until the list is read again")
        view.handle([.conversationsChanged])
        ascii.handle([.conversationsChanged])
        XCTAssertTrue(view.frame().line(0).contains("timer 1 week"), view.frame().line(0))
        let header = ascii.frame().line(0)
        XCTAssertTrue(header.contains("Sam | timer 1 week"), header)
        XCTAssertTrue(header.unicodeScalars.allSatisfy(\.isASCII), header)
        model.summaries[0].state = .muted
        view.handle([.conversationsChanged])
        XCTAssertTrue(view.frame().line(0).contains("Sam · muted · timer 1 week"), view.frame().line(0))
    }

    func testTabCompletesTheWords() {
        XCTAssertEqual(KeyMap.commandWords["timer"], ["off", "30s", "5m", "1h", "8h", "1d", "1w", "4w"])
        func complete(_ text: String) -> Completion {
            Completion.complete(text, commands: KeyMap.slashCommandNames, takingAName: KeyMap.commandsTakingAName,
                                names: ["Sam"], words: KeyMap.commandWords)
        }
        XCTAssertEqual(complete("/ti"), .completed("/timer "))
        XCTAssertEqual(complete("/timer o"), .completed("/timer off"))
        XCTAssertEqual(complete("/timer 1"), .candidates("/timer 1", ["1h", "1d", "1w"]))
        XCTAssertEqual(complete("/timer S"), .none, "words, not names")
        // In the view: Tab after `/timer ` lists them, and a unique start is completed.
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.type("/timer ")
        view.press(.tab)
        XCTAssertTrue(statusLine(view.frame()).contains("off  30s  5m  1h  8h  1d  1w  4w"), statusLine(view.frame()))
        view.type("4")
        view.press(.tab)
        XCTAssertEqual(view.state.composer.text, "/timer 4w")
        view.press(.enter)
        XCTAssertEqual(model.timersSet.map(\.1), [.fourWeeks])
    }

    func testHelpListsIt() {
        let (model, _) = samConversation()
        let view = makeView(model, rows: 80, columns: 100, open: "Sam")
        view.press(.function(1))
        let all = view.frame().text.joined(separator: "\n")
        XCTAssertTrue(all.contains("/timer DURATION"), all)
        XCTAssertTrue(all.contains("Disappearing messages here, for both of you"), all)
    }
}
