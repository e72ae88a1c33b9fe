import XCTest
@testable import RChatTUI

/// A composer with `text` typed into it.
private func composer(_ text: String) -> Composer {
    var c = Composer()
    for ch in text { c.apply(.insert(ch)) }
    return c
}

final class ComposerTests: XCTestCase {
    func testCursorMovesAndEdits() {
        var c = composer("helo")
        c.apply(.left)
        c.apply(.insert("l"))
        XCTAssertEqual(c.text, "hello")
        c.apply(.start); c.apply(.delete)
        XCTAssertEqual(c.text, "ello")
        c.apply(.end); c.apply(.backspace)
        XCTAssertEqual(c.text, "ell")
        c.apply(.right)   // already at the end
        XCTAssertEqual(c.cursor, 3)
        c.apply(.start); c.apply(.backspace); c.apply(.left)
        XCTAssertEqual(c.text, "ell")
        XCTAssertEqual(c.cursor, 0)
    }

    func testKillKeys() {
        var c = composer("one two  three")
        c.apply(.deleteWordBackward)
        XCTAssertEqual(c.text, "one two  ")
        c.apply(.deleteWordBackward)
        XCTAssertEqual(c.text, "one ")
        c = composer("abc def")
        c.apply(.left); c.apply(.left)
        c.apply(.deleteToEnd)
        XCTAssertEqual(c.text, "abc d")
        c.apply(.left)
        c.apply(.deleteToStart)
        XCTAssertEqual(c.text, "d")
        XCTAssertEqual(c.cursor, 0)
    }

    func testHistoryKeepsTheDraft() {
        var c = composer("first")
        _ = c.take()
        for ch in "second" { c.apply(.insert(ch)) }
        _ = c.take()
        for ch in "draft" { c.apply(.insert(ch)) }
        c.apply(.historyPrevious)
        XCTAssertEqual(c.text, "second")
        c.apply(.historyPrevious)
        XCTAssertEqual(c.text, "first")
        c.apply(.historyPrevious)
        XCTAssertEqual(c.text, "first")
        c.apply(.historyNext)
        XCTAssertEqual(c.text, "second")
        c.apply(.historyNext)
        XCTAssertEqual(c.text, "draft")
    }

    func testGraphemesAreOneStep() {
        var c = composer("a漢😀")
        XCTAssertEqual(c.cursorColumn, 5)
        c.apply(.backspace)
        XCTAssertEqual(c.text, "a漢")
        c = composer("e\u{301}")   // a combining mark typed after its letter joins it
        XCTAssertEqual(c.characters.count, 1)
        c.apply(.backspace)
        XCTAssertTrue(c.isEmpty)
    }
}

/// Drafts of several lines, word motion, the kill buffer and the Ctrl-R search.
final class ComposerEditingTests: XCTestCase {
    func testLinesUpDownAndLineEnds() {
        var c = composer("first line\nsecond\nthird line")
        XCTAssertEqual(c.cursorColumn, 10, "columns count from the start of the cursor's line")
        c.apply(.lineUp)
        XCTAssertEqual(c.cursor, 17, "the shorter line above: its end")
        c.apply(.lineUp)
        XCTAssertEqual(c.cursor, 6, "the same column on the first line")
        c.apply(.start)
        XCTAssertEqual(c.cursor, 0)
        c.apply(.end)
        XCTAssertEqual(c.cursor, 10, "End stops at the line break")
        c.apply(.lineDown); c.apply(.start)
        XCTAssertEqual(c.cursor, 11, "Home goes to the start of the line, not of the message")
        c.apply(.lineDown); c.apply(.lineDown)
        XCTAssertEqual(c.text, "first line\nsecond\nthird line", "Down on the last line with no history changes nothing")
    }

    func testUpGoesToHistoryOnlyFromTheFirstLine() {
        var c = composer("sent before")
        _ = c.take()
        for ch in "one\ntwo" { c.apply(.insert(ch)) }
        c.apply(.lineUp)
        XCTAssertEqual(c.text, "one\ntwo", "from the second line Up moves up a line")
        XCTAssertEqual(c.cursor, 3)
        c.apply(.lineUp)
        XCTAssertEqual(c.text, "sent before", "from the first line Up shows the history")
        c.apply(.lineDown)
        XCTAssertEqual(c.text, "one\ntwo", "and Down brings the draft back")
    }

    func testWordMotion() {
        var c = composer("hello, wide world")
        c.apply(.wordLeft)
        XCTAssertEqual(c.cursor, 12)
        c.apply(.wordLeft)
        XCTAssertEqual(c.cursor, 7, "punctuation and spaces are skipped")
        c.apply(.wordLeft); c.apply(.wordLeft)
        XCTAssertEqual(c.cursor, 0)
        c.apply(.wordRight)
        XCTAssertEqual(c.cursor, 5, "the end of hello, before the comma")
        c.apply(.wordRight)
        XCTAssertEqual(c.cursor, 11)
    }

    func testKillsFeedYank() {
        var c = composer("alpha beta-gamma delta")
        c.apply(.deleteAlphanumericWordBackward)
        XCTAssertEqual(c.text, "alpha beta-gamma ")
        XCTAssertEqual(c.killed, "delta")
        c.apply(.deleteAlphanumericWordBackward)
        XCTAssertEqual(c.text, "alpha beta-", "Alt-Backspace stops at punctuation, Ctrl-W would not")
        c.apply(.start)
        c.apply(.deleteWordForward)
        XCTAssertEqual(c.text, " beta-")
        XCTAssertEqual(c.killed, "alpha")
        c.apply(.end)
        c.apply(.yank)
        XCTAssertEqual(c.text, " beta-alpha")
        c.apply(.deleteWordBackward)
        XCTAssertEqual(c.killed, "beta-alpha", "Ctrl-W kills back to the space")
        c.apply(.deleteToStart)
        XCTAssertEqual(c.killed, " ")
        c.apply(.yank); c.apply(.yank)
        XCTAssertEqual(c.text, "  ")
        c.apply(.backspace); c.apply(.backspace)
        c.apply(.deleteToStart)
        XCTAssertEqual(c.killed, " ", "an empty kill keeps the buffer")
    }

    func testCtrlKAtALineEndJoinsTheNextAndCtrlUStopsAtTheLineStart() {
        var c = composer("one\ntwo")
        c.apply(.deleteToStart)
        XCTAssertEqual(c.text, "one\n")
        c.apply(.yank)
        c.apply(.lineUp); c.apply(.end)
        c.apply(.deleteToEnd)
        XCTAssertEqual(c.text, "onetwo", "Ctrl-K at the end of a line takes the line break")
        XCTAssertEqual(c.killed, "\n")
    }

    private func withHistory(_ entries: [String]) -> Composer {
        var c = Composer()
        for e in entries {
            for ch in e { c.apply(.insert(ch)) }
            _ = c.take()
        }
        return c
    }

    func testReverseSearchNarrowsGoesOlderAndAccepts() {
        var c = withHistory(["hello there", "general kenobi", "Hello again"])
        for ch in "my draft" { c.apply(.insert(ch)) }
        c.search(.older)
        guard case .searching(let empty) = c.mode else { return XCTFail("Ctrl-R starts a search") }
        XCTAssertNil(empty.match)
        c.search(.type("h")); c.search(.type("e"))
        guard case .searching(let s1) = c.mode else { return XCTFail() }
        XCTAssertEqual(s1.match?.entry, 2, "the newest entry with he (case ignored)")
        c.search(.type("l"))
        c.search(.older)
        guard case .searching(let s2) = c.mode else { return XCTFail() }
        XCTAssertEqual(s2.match?.entry, 0, "Ctrl-R again: the next older one")
        c.search(.older)
        guard case .searching(let s3) = c.mode else { return XCTFail() }
        XCTAssertEqual(s3.match?.entry, 0, "nothing older: the match stays")
        XCTAssertTrue(s3.failing)
        XCTAssertEqual(c.text, "my draft", "the draft is untouched while searching")
        c.search(.accept)
        XCTAssertEqual(c.mode, .editing)
        XCTAssertEqual(c.text, "hello there")
        XCTAssertEqual(c.cursor, 0, "the cursor at the match")
        XCTAssertEqual(c.history.count, 3, "accepting sends nothing")
    }

    func testReverseSearchCancelRestoresTheDraftAndBackspaceWidens() {
        var c = withHistory(["alpha", "beta"])
        for ch in "draft" { c.apply(.insert(ch)) }
        c.apply(.left)
        c.search(.older)
        c.search(.type("a")); c.search(.type("l"))
        guard case .searching(let narrow) = c.mode else { return XCTFail() }
        XCTAssertEqual(narrow.match?.entry, 0)
        c.search(.backspace)
        guard case .searching(let wide) = c.mode else { return XCTFail() }
        XCTAssertEqual(wide.match?.entry, 1, "a alone matches beta, the newest")
        c.search(.type("z"))
        guard case .searching(let none) = c.mode else { return XCTFail() }
        XCTAssertTrue(none.failing)
        c.search(.cancel)
        XCTAssertEqual(c.mode, .editing)
        XCTAssertEqual(c.text, "draft")
        XCTAssertEqual(c.cursor, 4, "the cursor where it was")
    }
}

/// Tab completion of commands and contact names.
final class CompletionTests: XCTestCase {
    private let commands = KeyMap.slashCommandNames
    private func complete(_ text: String, names: [String] = ["Sam Smith", "Sally", "Alex"]) -> Completion {
        Completion.complete(text, commands: commands, takingAName: KeyMap.commandsTakingAName, names: names)
    }

    func testCommandNames() {
        XCTAssertTrue(commands.contains("open") && commands.contains("unmute") && commands.contains("edit"), "\(commands)")
        XCTAssertEqual(complete("/op"), .completed("/open "))
        XCTAssertEqual(complete("/REN"), .completed("/rename "), "case is ignored")
        XCTAssertEqual(complete("/re"), .candidates("/re", ["remove", "react", "rename", "reconnect"]))
        XCTAssertEqual(complete("/un"), .candidates("/un", ["unmute", "unblock"]))
        XCTAssertEqual(complete("/zz"), .none)
        XCTAssertEqual(complete("hello"), .none)
    }

    func testContactNamesWholeWithSpaces() {
        XCTAssertEqual(complete("/open sam"), .completed("/open Sam Smith"))
        XCTAssertEqual(complete("/mute a"), .completed("/mute Alex"))
        XCTAssertEqual(complete("/open s"), .candidates("/open Sa", ["Sam Smith", "Sally"]), "extended as far as they agree")
        XCTAssertEqual(complete("/open Sam", names: ["Sam Smith", "Sam Jones"]), .candidates("/open Sam ", ["Sam Smith", "Sam Jones"]))
        XCTAssertEqual(complete("/rename s"), .none, "rename takes a new name, not a contact")
    }
}
