import XCTest
@testable import RChatTUI

final class ComposerTests: XCTestCase {
    private func composer(_ text: String) -> Composer {
        var c = Composer()
        for ch in text { c.apply(.insert(ch)) }
        return c
    }

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
