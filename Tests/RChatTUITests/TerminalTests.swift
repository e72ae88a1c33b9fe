import XCTest
@preconcurrency import CNcursesw
@testable import RChatTUI

/// The pure parts of the curses backend: what it writes and how it reads keys.
final class TerminalTests: XCTestCase {
    func testFirstFrameWritesEverything() {
        var s = Screen(rows: 2, columns: 4)
        s.put("ab", row: 0, column: 0)
        let runs = ScreenDiff.runs(from: nil, to: s)
        XCTAssertEqual(runs.map(\.text), ["ab  ", "    "])
    }

    func testOnlyChangedCellsAreWritten() {
        var a = Screen(rows: 2, columns: 10)
        a.put("hello ✓", row: 0, column: 0)
        var b = a
        b.put("ⓥ", row: 0, column: 6, style: CellStyle(bold: true, reverse: true))
        XCTAssertEqual(ScreenDiff.runs(from: a, to: a), [])
        let runs = ScreenDiff.runs(from: a, to: b)
        XCTAssertEqual(runs.count, 1)
        XCTAssertEqual(runs[0].row, 0)
        XCTAssertEqual(runs[0].column, 6)
        XCTAssertEqual(runs[0].text, "ⓥ")
    }

    func testChangedWideCharacterIsWrittenWhole() {
        var a = Screen(rows: 1, columns: 6)
        a.put("ab漢", row: 0, column: 0)
        var b = Screen(rows: 1, columns: 6)
        b.put("ab字", row: 0, column: 0)
        let runs = ScreenDiff.runs(from: a, to: b)
        XCTAssertEqual(runs.map(\.column), [2])
        XCTAssertEqual(runs.map(\.text), ["字"])
    }

    func testResizeRewritesEverything() {
        let runs = ScreenDiff.runs(from: Screen(rows: 2, columns: 4), to: Screen(rows: 3, columns: 4))
        XCTAssertEqual(runs.count, 3)
    }

    func testKeyDecoding() {
        XCTAssertEqual(KeyDecoder.character(13), .enter)
        XCTAssertEqual(KeyDecoder.character(10), .control("j"), "LF is told from CR (a paste's CRLF)")
        XCTAssertEqual(KeyDecoder.character(127), .backspace)
        XCTAssertEqual(KeyDecoder.character(1), .control("a"))
        XCTAssertEqual(KeyDecoder.character(23), .control("w"))
        XCTAssertEqual(KeyDecoder.character(27), .escape)
        XCTAssertEqual(KeyDecoder.character(0x6F22), .character("漢"))
        XCTAssertNil(KeyDecoder.character(0x9B), "C1 controls are not typed text")
        XCTAssertEqual(KeyDecoder.functionKey(KEY_UP), .up)
        XCTAssertEqual(KeyDecoder.functionKey(KEY_NPAGE), .pageDown)
        XCTAssertEqual(KeyDecoder.functionKey(KEY_RESIZE), .resize)
        XCTAssertEqual(KeyDecoder.functionKey(KEY_BTAB), .backTab)
        XCTAssertEqual(KeyDecoder.functionKey(KEY_F0 + 1), .function(1))
    }
}

/// A paste arrives bracketed: its line breaks never submit the composer; they are typed.
final class BracketedPasteTests: XCTestCase {
    /// Keys as curses gives them: CR is Enter, LF is Ctrl-J.
    private func keys(_ text: String) -> [Key] {
        text.unicodeScalars.map {
            switch $0 {
            case "\u{1B}": .escape
            case "\r": .enter
            case "\n": .control("j")
            case "\t": .tab
            default: .character(Character($0))
            }
        }
    }
    private func typed(_ text: String) -> [Key] { text.map { .character($0) } }

    func testLineBreaksInsideAPasteAreTypedAndTheMarkersGo() {
        var paste = BracketedPaste()
        XCTAssertEqual(paste.fold(keys("a\u{1B}[200~b\rc\td\u{1B}[201~\r")),
                       typed("ab\nc d") + [.enter], "the Enter after the paste still submits")
        XCTAssertFalse(paste.inside)
        XCTAssertEqual(paste.fold(keys("x\r")), keys("x\r"), "outside a paste Enter is Enter")
    }

    func testCRLFAndLFAndCRAreEachOneLineBreak() {
        var paste = BracketedPaste()
        XCTAssertEqual(paste.fold(keys("\u{1B}[200~one\r\ntwo\nthree\rfour\n\nsix\u{1B}[201~")),
                       typed("one\ntwo\nthree\nfour\n\nsix"))
        // A CRLF split between two reads is still one line break.
        XCTAssertEqual(paste.fold(keys("\u{1B}[200~a\r")), typed("a\n"))
        XCTAssertEqual(paste.fold(keys("\nb\u{1B}[201~")), typed("b"))
    }

    func testAPasteSpanningReads() {
        var paste = BracketedPaste()
        XCTAssertEqual(paste.fold(keys("\u{1B}[200~rchat-2-AB\r")), typed("rchat-2-AB\n"))
        XCTAssertTrue(paste.inside)
        XCTAssertEqual(paste.fold([.character("C"), .up, .enter] + keys("D\u{1B}[201~")), typed("C\nD"),
                       "other keys in a paste are dropped")
        XCTAssertEqual(paste.fold([.escape]), [.escape], "a lone Esc is still Esc")
    }
}

/// Home and End as tmux, screen and the Linux console send them, when curses hands them
/// over unrecognised: Esc and then the bytes as characters.
final class EscapeSequenceTests: XCTestCase {
    private func raw(_ bytes: String) -> [Key] { [.escape] + bytes.map { .character($0) } }

    func testHomeAndEndSequencesAreFolded() {
        for bytes in ["[1~", "[7~", "[H", "OH"] {
            XCTAssertEqual(KeyDecoder.folding(raw(bytes)), [.home], "ESC \(bytes)")
        }
        for bytes in ["[4~", "[8~", "[F", "OF"] {
            XCTAssertEqual(KeyDecoder.folding(raw(bytes)), [.end], "ESC \(bytes)")
        }
    }

    func testSequencesAmongTypedTextAndTogether() {
        let keys: [Key] = [.character("a")] + raw("[4~") + raw("[1~") + [.character("b")] + raw("OF")
        XCTAssertEqual(KeyDecoder.folding(keys), [.character("a"), .end, .home, .character("b"), .end])
        XCTAssertEqual(KeyDecoder.folding([.escape] + raw("[4~")), [.escape, .end], "a real Esc before End stays")
    }

    func testEverythingElsePassesThrough() {
        XCTAssertEqual(KeyDecoder.folding([.escape]), [.escape])
        XCTAssertEqual(KeyDecoder.folding([.escape, .character("x")]), [.alt(.character("x"))], "Alt-X")
        XCTAssertEqual(KeyDecoder.folding([.escape, .enter, .character("a")]), [.alt(.enter), .character("a")], "Alt-Enter")
        XCTAssertEqual(KeyDecoder.folding([.escape, .escape]), [.escape, .escape])
        XCTAssertEqual(KeyDecoder.folding(raw("[I") + raw("[O")), [.focusIn, .focusOut], "focus reports")
        XCTAssertEqual(KeyDecoder.folding(raw("[4")), raw("[4"), "incomplete")
        XCTAssertEqual(KeyDecoder.folding(raw("[5~")), raw("[5~"), "not Home or End")
        XCTAssertEqual(KeyDecoder.folding(raw("[2~")), raw("[2~"))
        let text: [Key] = "[4~ typed".map { .character($0) }
        XCTAssertEqual(KeyDecoder.folding(text), text, "without Esc it is typed text")
        XCTAssertEqual(KeyDecoder.folding([]), [])
    }

    func testShiftEnterAndCtrlArrows() {
        XCTAssertEqual(KeyDecoder.folding(raw("[27;2;13~")), [.alt(.enter)], "xterm modifyOtherKeys Shift-Enter")
        XCTAssertEqual(KeyDecoder.folding(raw("[13;2u")), [.alt(.enter)], "kitty Shift-Enter")
        XCTAssertEqual(KeyDecoder.folding(raw("[1;5D") + raw("[1;5C")), [.controlLeft, .controlRight], "xterm Ctrl-Left/Right")
        XCTAssertEqual(KeyDecoder.folding(raw("Od") + raw("Oc")), [.controlLeft, .controlRight], "rxvt Ctrl-Left/Right")
        XCTAssertEqual(KeyDecoder.folding([.escape, .backspace]), [.alt(.backspace)], "Alt-Backspace")
        XCTAssertEqual(KeyDecoder.folding([.escape, .character("b")]), [.alt(.character("b"))], "Alt-B")
    }

    func testFindIsHome() {
        // xterm's terminfo calls ESC[1~ Find (and ESC[4~ Select): tmux and screen send them for Home/End.
        XCTAssertEqual(KeyDecoder.functionKey(KEY_FIND), .home)
        XCTAssertEqual(KeyDecoder.functionKey(KEY_SELECT), .end)
        XCTAssertEqual(KeyDecoder.functionKey(KEY_HOME), .home)
        XCTAssertEqual(KeyDecoder.functionKey(KEY_END), .end)
    }

    func testEndNoLongerTypesIntoTheComposer() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.type("hi")
        for key in KeyDecoder.folding(raw("[4~") + raw("[8~") + raw("[1~")) { view.handle(key) }
        XCTAssertEqual(view.state.composer.text, "hi")
        XCTAssertEqual(view.state.focus, .composer)
    }
}

final class TerminalTypeTests: XCTestCase {
    func testTerminalTypesTheViewCannotDrawOnAreNamedInOneLine() {
        XCTAssertNil(CursesTerminal.problem(term: "xterm-256color"))
        XCTAssertNil(CursesTerminal.problem(term: "vt100"))
        XCTAssertNil(CursesTerminal.problem(term: "linux"))
        let dumb = CursesTerminal.problem(term: "dumb")
        XCTAssertTrue(dumb?.contains("'dumb' cannot place text on the screen") ?? false, dumb ?? "nil")
        let unknown = CursesTerminal.problem(term: "no-such-terminal\u{1B}[2J")
        XCTAssertTrue(unknown?.contains("does not know the terminal type 'no-such-terminal␛[2J'") ?? false, unknown ?? "nil")
        XCTAssertTrue(CursesTerminal.problem(term: nil)?.contains("TERM is not set") ?? false)
        XCTAssertTrue(CursesTerminal.problem(term: "")?.contains("TERM is not set") ?? false)
        for problem in [dumb, unknown, CursesTerminal.problem(term: nil)] {
            XCTAssertFalse(problem?.contains("\n") ?? true, "one line")
        }
    }

    func testCtrlZAsksTheBackendToSuspend() {
        XCTAssertEqual(KeyMap.command(for: .control("z"), focus: .composer, composerEmpty: false), .suspend)
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.type("kept")
        view.press(.control("z"))
        XCTAssertTrue(view.suspendRequested)
        XCTAssertFalse(view.quitRequested)
        XCTAssertEqual(view.state.composer.text, "kept")
    }
}

extension EscapeSequenceTests {
    /// Issue 26: focus reports (`ESC [ I`, `ESC [ O`, sent once `ESC [ ? 1004 h` is on) are
    /// keys of their own, never typed: among typed text, after a real Esc, and inside a
    /// paste (where they are not part of what was pasted).
    func testFocusReportsAreDecodedAndNeverTyped() {
        XCTAssertEqual(KeyDecoder.focusReportingOn, "\u{1B}[?1004h")
        XCTAssertEqual(KeyDecoder.focusReportingOff, "\u{1B}[?1004l")
        let typed: [Key] = [.character("a")] + raw("[O") + [.character("b")] + raw("[I") + raw("[I")
        XCTAssertEqual(KeyDecoder.folding(typed), [.character("a"), .focusOut, .character("b"), .focusIn, .focusIn])
        XCTAssertEqual(KeyDecoder.folding([.escape] + raw("[O")), [.escape, .focusOut], "a real Esc before it stays")
        XCTAssertEqual(KeyDecoder.folding(raw("[O") + [.escape, .character("x")]), [.focusOut, .alt(.character("x"))])
        var paste = BracketedPaste()
        let pasted = paste.fold(KeyDecoder.folding(raw("[200~") + [.character("h")] + raw("[O") + [.character("i")] + raw("[201~")))
        XCTAssertEqual(pasted, [.character("h"), .focusOut, .character("i")], "the paste's text, and the focus report kept")
        XCTAssertFalse(paste.inside)
    }
}
