import XCTest
import RChatCore
@testable import RChatTUI

/// Drafts and messages of several lines on the screen model: pasted blocks, Alt-Enter, the
/// growing composer, Up/Down inside a draft, multi-line messages in the conversation.
final class MultiLineComposerTests: XCTestCase {
    private func paste(_ view: ChatView, _ text: String) {
        var paste = BracketedPaste()
        let raw: [Key] = [.escape] + "[200~".map { .character($0) }
            + text.unicodeScalars.map { $0 == "\n" ? Key.control("j") : $0 == "\r" ? .enter : .character(Character($0)) }
            + [.escape] + "[201~".map { .character($0) }
        for key in paste.fold(raw) { view.handle(key) }
    }

    private func sentTexts(_ model: FakeChatModel) -> [String] {
        model.sent.compactMap { if case .text(let t) = $0.content { t } else { nil } }
    }

    func testAPastedBlockIsOneDraftShownOnSeveralRowsAndSentOnce() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        paste(view, "first line\r\nsecond line\nthird line")
        XCTAssertEqual(view.state.composer.text, "first line\nsecond line\nthird line")
        XCTAssertTrue(model.sent.isEmpty, "no line break submitted anything")
        let screen = view.frame()
        XCTAssertEqual(screen.line(21), "› first line", screen.dump)
        XCTAssertEqual(screen.line(22), "  second line", screen.dump)
        XCTAssertEqual(screen.line(23), "  third line", screen.dump)
        XCTAssertTrue(screen.line(20).contains("Online"), "the status bar moved up:\n\(screen.dump)")
        XCTAssertEqual(screen.cursor?.row, 23)
        XCTAssertEqual(screen.cursor?.column, 12, "the cursor after the last line's text")
        XCTAssertEqual(Layout(view.state).bodyHeight, 19, "the body gave the composer its rows")
        view.press(.enter)
        XCTAssertEqual(sentTexts(model), ["first line\nsecond line\nthird line"], "one message, line breaks kept")
        XCTAssertEqual(Layout(view.state).composerHeight, 1, "the composer shrinks back")
        paste(view, "ends with a line break\n\n")
        view.press(.enter)
        XCTAssertEqual(sentTexts(model).last, "ends with a line break", "trailing line breaks are not sent")
    }

    func testAltEnterAndShiftEnterAddALineEnterSends() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.type("one")
        view.press(.alt(.enter))
        view.type("two")
        for key in KeyDecoder.folding([.escape] + "[13;2u".map { .character($0) }) { view.handle(key) }
        view.type("three")
        XCTAssertEqual(view.state.composer.text, "one\ntwo\nthree")
        view.press(.control("j"))
        XCTAssertEqual(sentTexts(model), ["one\ntwo\nthree"], "Ctrl-J (LF) sends, as Enter does")
        view.press(.tab, .tab)
        XCTAssertEqual(view.state.focus, .list)
        view.press(.control("j"))
        XCTAssertEqual(view.state.focus, .composer, "LF (a typed-ahead Enter) opens from the list too")
    }

    func testUpAndDownMoveBetweenLinesOnScreen() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.type("sent earlier")
        view.press(.enter)
        paste(view, "a long first line\nshort")
        view.press(.up)
        var screen = view.frame()
        XCTAssertEqual(screen.cursor?.row, 22, "on the first line")
        XCTAssertEqual(screen.cursor?.column, 2 + 5, "the same column")
        view.press(.down)
        screen = view.frame()
        XCTAssertEqual(screen.cursor?.row, 23)
        view.press(.up, .up)
        XCTAssertEqual(view.state.composer.text, "sent earlier", "Up on the first line: history")
    }

    func testTheComposerStopsAtAThirdOfTheScreenAndKeepsTheCursorInView() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        paste(view, (1...20).map { "line \($0)" }.joined(separator: "\n"))
        var screen = view.frame()
        XCTAssertEqual(Layout(view.state).composerHeight, 8, "24 rows: at most 8 for the composer")
        XCTAssertEqual(screen.line(23), "  line 20", screen.dump)
        XCTAssertEqual(screen.line(16), "› line 13", screen.dump)
        XCTAssertEqual(screen.cursor?.row, 23)
        for _ in 0..<19 { view.press(.up) }
        screen = view.frame()
        XCTAssertEqual(screen.line(16), "› line 1", "scrolled to the cursor's row:\n\(screen.dump)")
        XCTAssertEqual(screen.cursor?.row, 16)
        XCTAssertTrue(screen.contains("Hello! Are you there?") || screen.contains("See you later"), screen.dump)
    }

    func testALongLineWrapsInTheComposerAndTheCursorFollows() {
        let (model, _) = samConversation()
        let view = makeView(model, rows: 24, columns: 40, open: "Sam")
        view.type(String(repeating: "x", count: 37) + "yz")   // 37 columns fit beside the prompt
        let screen = view.frame()
        XCTAssertEqual(screen.line(22), "› " + String(repeating: "x", count: 37), screen.dump)
        XCTAssertEqual(screen.line(23), "  yz", screen.dump)
        XCTAssertEqual(screen.cursor?.row, 23)
        XCTAssertEqual(screen.cursor?.column, 4)
        view.resize(rows: 24, columns: 80)
        let wide = view.frame()
        XCTAssertEqual(wide.line(23), "› " + String(repeating: "x", count: 37) + "yz", "one row again after a resize")
        XCTAssertEqual(Layout(view.state).composerHeight, 1)
    }

    func testRowsBreakBetweenGraphemesAndTheCursorSitsWhereItsCharacterIs() {
        let text = Array("ab漢字c\nd")
        let end = ComposerRows(text, cursor: text.count, width: 5)
        XCTAssertEqual(end.lines.map { String($0) }, ["ab漢", "字c", "d"], "a wide character that does not fit starts the next row")
        XCTAssertTrue(end.cursor == (2, 1))
        XCTAssertTrue(ComposerRows(text, cursor: 3, width: 5).cursor == (1, 0), "before 字: on the row where 字 is drawn")
        XCTAssertTrue(ComposerRows(text, cursor: 5, width: 5).cursor == (1, 3), "before the line break: after c")
        let full = Array("abcde")
        let atEdge = ComposerRows(full, cursor: 5, width: 5)
        XCTAssertEqual(atEdge.lines.count, 2, "a cursor after a full row gets a cell on the next one")
        XCTAssertTrue(atEdge.cursor == (1, 0))
    }

    func testMessagesWithLineBreaksAreShownAsSuchWithTheHangingIndent() {
        let (model, _) = samConversation()
        model.addMessage("Sam", .incoming, "first of two\nsecond of two is much longer than one row of the pane can hold")
        let screen = view(model).frame()
        guard let first = screen.position(of: "first of two"), let second = screen.position(of: "second of two") else {
            return XCTFail(screen.dump)
        }
        XCTAssertEqual(second.row, first.row + 1, screen.dump)
        XCTAssertEqual(second.column, first.column, "each line starts at the text column")
        let row = second.row + 1
        XCTAssertTrue(screen.line(row).hasSuffix("hold"), screen.dump)
        XCTAssertNotEqual(screen[row, first.column].character, " ", "the wrapped part hangs under the text:\n\(screen.dump)")
        XCTAssertEqual(screen[row, first.column - 1].character, " ", screen.dump)
    }

    private func view(_ model: FakeChatModel) -> ChatView { makeView(model, open: "Sam") }
}
