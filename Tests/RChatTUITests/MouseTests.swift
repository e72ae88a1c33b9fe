import XCTest
import RChatCore
@testable import RChatTUI

/// SGR mouse reports decoded, and what the view does with them: the wheel scrolls the pane
/// under the pointer, a click opens a conversation or selects a message; `mouse off` asks
/// the terminal for no reports.
final class MouseTests: XCTestCase {
    private func raw(_ bytes: String) -> [Key] { [.escape] + bytes.map { .character($0) } }

    func testSGRReportsAreDecoded() {
        XCTAssertEqual(KeyDecoder.folding(raw("[<0;5;3M")), [.mouse(MouseEvent(.press(button: 0), row: 2, column: 4))])
        XCTAssertEqual(KeyDecoder.folding(raw("[<0;5;3m")), [.mouse(MouseEvent(.release, row: 2, column: 4))])
        XCTAssertEqual(KeyDecoder.folding(raw("[<2;120;40M")), [.mouse(MouseEvent(.press(button: 2), row: 39, column: 119))])
        XCTAssertEqual(KeyDecoder.folding(raw("[<64;10;10M")), [.mouse(MouseEvent(.wheelUp, row: 9, column: 9))])
        XCTAssertEqual(KeyDecoder.folding(raw("[<65;10;10M")), [.mouse(MouseEvent(.wheelDown, row: 9, column: 9))])
        XCTAssertEqual(KeyDecoder.folding(raw("[<32;10;10M")), [.mouse(MouseEvent(.other, row: 9, column: 9))], "motion")
        XCTAssertEqual(KeyDecoder.folding(raw("[<66;10;10M")), [.mouse(MouseEvent(.other, row: 9, column: 9))], "the horizontal wheel")
        XCTAssertEqual(KeyDecoder.folding(raw("[<4;1;1M")), [.mouse(MouseEvent(.press(button: 0), row: 0, column: 0))], "with Shift")
        // Two reports and a key in one read.
        XCTAssertEqual(KeyDecoder.folding(raw("[<64;1;2M") + raw("[<65;1;2M") + [.character("a")]),
                       [.mouse(MouseEvent(.wheelUp, row: 1, column: 0)), .mouse(MouseEvent(.wheelDown, row: 1, column: 0)), .character("a")])
    }

    func testWhatIsNotAReportPassesAsItCame() {
        for bytes in ["[<0;5M", "[<0;5;M", "[<;5;3M", "[<0;0;3M", "[<0;5;3X", "[<0;5;3", "[<a;5;3M", "[<0;5;3;4M", "[<9999999;1;1M"] {
            XCTAssertEqual(KeyDecoder.folding(raw(bytes)), raw(bytes), "ESC \(bytes)")
        }
    }

    /// Sam's conversation with 40 messages, in a 24-row view with the list showing.
    private func longConversation() -> (FakeChatModel, ChatView) {
        let model = FakeChatModel()
        model.contact("Sam")
        model.contact("Alex")
        for i in 1...40 { model.addMessage("Sam", .incoming, "message number \(i)") }
        let view = makeView(model, rows: 24, columns: 100, open: "Sam")
        return (model, view)
    }

    func testTheWheelScrollsTheConversationUnderThePointer() {
        let (_, view) = longConversation()
        var screen = view.frame()
        XCTAssertTrue(screen.text.joined(separator: "\n").contains("message number 40"))
        let layout = Layout(view.state)
        for _ in 0..<5 { view.handle(.mouse(MouseEvent(.wheelUp, row: 5, column: layout.paneLeft + 10))) }
        screen = view.frame()
        XCTAssertFalse(screen.text.joined(separator: "\n").contains("message number 40"), "15 lines up: the newest is below\n\(screen.text.joined(separator: "\n"))")
        XCTAssertEqual(view.state.focus, .composer, "scrolling moves no focus: typing still writes")
        for _ in 0..<5 { view.handle(.mouse(MouseEvent(.wheelDown, row: 5, column: layout.paneLeft + 10))) }
        XCTAssertTrue(view.frame().text.joined(separator: "\n").contains("message number 40"), "back at the newest")
        XCTAssertNil(view.state.anchor, "following the newest again")
    }

    func testTheWheelOverTheListMovesItsCursor() {
        let (_, view) = longConversation()
        _ = view.frame()
        view.handle(.mouse(MouseEvent(.wheelDown, row: 3, column: 2)))
        XCTAssertEqual(view.state.focus, .list)
        XCTAssertEqual(view.state.conversations[view.state.listCursor].name, "Alex")
        XCTAssertEqual(view.frame().line(0), " rChat · Sam", "moving the cursor opens nothing")
    }

    func testAClickOnTheListOpensThatConversation() {
        let (model, view) = longConversation()
        _ = view.frame()
        let layout = Layout(view.state)
        let alex = ListPane.entries(view.state, layout).first { view.state.conversations[$0.index].name == "Alex" }!
        view.handle(.mouse(MouseEvent(.press(button: 0), row: alex.row, column: 3)))
        XCTAssertEqual(view.frame().line(0), " rChat · Alex")
        XCTAssertEqual(view.state.openConversation, model.id("Alex"))
        XCTAssertEqual(view.state.focus, .composer)
        // Below the last entry: nothing happens.
        view.handle(.mouse(MouseEvent(.press(button: 0), row: layout.bodyTop + layout.bodyHeight - 1, column: 3)))
        XCTAssertEqual(view.state.openConversation, model.id("Alex"))
    }

    func testAClickInTheConversationSelectsTheMessageOnThatRow() throws {
        let (_, view) = longConversation()
        let screen = view.frame()
        let layout = Layout(view.state)
        let row = try XCTUnwrap((0..<screen.rows).first { screen.line($0).contains("message number 38") })
        view.handle(.mouse(MouseEvent(.press(button: 0), row: row, column: layout.paneLeft + 20)))
        XCTAssertEqual(view.state.focus, .conversation)
        let selected = try XCTUnwrap(view.state.selected.flatMap { view.state.window?.item(at: $0) })
        guard case .message(let message) = selected else { return XCTFail("a message is selected") }
        XCTAssertEqual(message.text, "message number 38")
        // The composer row gives the focus back to the composer.
        view.handle(.mouse(MouseEvent(.press(button: 0), row: layout.composerRow, column: 5)))
        XCTAssertEqual(view.state.focus, .composer)
    }

    func testAnOverlayTakesNoMouse() {
        let (_, view) = longConversation()
        _ = view.frame()
        view.press(.function(1))
        XCTAssertNotNil(view.state.overlay)
        view.handle(.mouse(MouseEvent(.press(button: 0), row: 3, column: 3)))
        XCTAssertNotNil(view.state.overlay, "the help stays until a key closes it")
        XCTAssertEqual(view.frame().line(0), " rChat · Sam")
    }

    func testMouseReportingFollowsTheSetting() {
        XCTAssertTrue(ViewSettings().mouse, "on by default")
        let model = FakeChatModel()
        model.contact("Sam")
        model.settings.mouse = true
        let view = makeView(model)
        XCTAssertEqual(view.takeEffects(), [.mouseReporting(true)])
        model.settings.mouse = false
        view.handle([.changedElsewhere])
        XCTAssertEqual(view.takeEffects(), [.mouseReporting(false)])
        view.handle([.changedElsewhere])
        XCTAssertEqual(view.takeEffects(), [], "asked once per change")

        let off = FakeChatModel()
        off.settings.mouse = false
        XCTAssertEqual(makeView(off).takeEffects(), [], "never asked for when off")
        XCTAssertEqual(TerminalEffect.mouseReporting(true).sequence, "\u{1B}[?1000h\u{1B}[?1006h")
        XCTAssertEqual(TerminalEffect.mouseReporting(false).sequence, "\u{1B}[?1006l\u{1B}[?1000l")
    }
}
