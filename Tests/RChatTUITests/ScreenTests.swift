import XCTest
@testable import RChatTUI

final class ScreenTests: XCTestCase {
    func testWideCharacterTakesTwoCells() {
        var s = Screen(rows: 1, columns: 6)
        let end = s.put("a漢b", row: 0, column: 0)
        XCTAssertEqual(end, 4)
        XCTAssertEqual(s[0, 1].width, 2)
        XCTAssertTrue(s[0, 2].isContinuation)
        XCTAssertEqual(s.line(0), "a漢b")
    }

    func testWideCharacterAtTheEdgeBecomesASpace() {
        var s = Screen(rows: 1, columns: 3)
        s.put("ab漢", row: 0, column: 0)
        XCTAssertEqual(s.line(0), "ab")
        XCTAssertFalse(s[0, 2].isContinuation)
    }

    func testOverwritingHalfAWideCharacterClearsTheOtherHalf() {
        var s = Screen(rows: 1, columns: 4)
        s.put("漢字", row: 0, column: 0)
        s.put("x", row: 0, column: 1)
        XCTAssertEqual(s.line(0), " x字")
        s.put("y", row: 0, column: 2)
        XCTAssertEqual(s.line(0), " xy")
    }

    func testColumnsStayAlignedWhateverTheScript() {
        let samples = ["漢字", "😀😀", "🇫🇷🇩🇪", "e\u{301}e\u{301}e\u{301}e\u{301}", "ab😀", "👨‍👩‍👧ab"]
        var s = Screen(rows: samples.count, columns: 10)
        for (row, text) in samples.enumerated() {
            s.put(text, row: row, column: 0)
            s.put("|", row: row, column: 4)
        }
        for row in 0..<samples.count {
            XCTAssertEqual(s[row, 4].character, "|", "row \(row): \(s.line(row))")
            XCTAssertEqual(s.position(of: "|")?.column ?? -1 >= 0, true)
        }
    }

    func testASCIIScreenHasOnlyASCII() {
        var s = Screen(rows: 1, columns: 10, asciiOnly: true)
        s.put("漢😀é", row: 0, column: 0)
        XCTAssertEqual(s.line(0), "???")
    }

    func testClipsAtLimit() {
        var s = Screen(rows: 1, columns: 10)
        s.put("abcdefgh", row: 0, column: 2, limit: 5)
        XCTAssertEqual(s.line(0), "  abc")
    }
}
