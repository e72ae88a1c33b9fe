import XCTest
import RChatCore
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

    /// Each sample is one cell plus continuations: the bar after it is at the sample's
    /// columns, the sample reads back whole (marks and all), and nothing is left over when
    /// another text is written over it.
    func testEveryClusterIsOneCellAndTheNextColumnStays() {
        for sample in WrapTests.clusters {
            let width = TextWidth.columns(of: sample)
            var s = Screen(rows: 1, columns: 20)
            let end = s.put("[" + sample + "]", row: 0, column: 0)
            XCTAssertEqual(end, width + 2, sample)
            XCTAssertEqual(s[0, width + 1].character, "]", sample)
            XCTAssertEqual(s[0, 1].width, UInt8(width), sample)
            for c in 2..<(width + 1) { XCTAssertTrue(s[0, c].isContinuation, "\(sample) column \(c)") }
            XCTAssertEqual(s.line(0), "[" + String(TextWidth.displayed(Character(sample), asciiOnly: false).0) + "]")
            // Overwriting any column of it leaves no part of it.
            for c in 1..<(width + 1) {
                var t = s
                t.put("x", row: 0, column: c)
                XCTAssertFalse(t.line(0).contains(sample), "\(sample) column \(c)")
                XCTAssertEqual(TextWidth.columns(of: t.line(0).trimmingCharacters(in: .whitespaces)) <= width + 2, true)
                XCTAssertEqual((0..<20).filter { t[0, $0].isContinuation }.count, 0, "\(sample): stray continuation at \(c)")
            }
        }
    }

    /// A cluster wider than what is left before the limit is not drawn in part: spaces up to
    /// the limit, nothing past it.
    func testAClusterThatDoesNotFitBecomesSpaces() {
        var s = Screen(rows: 1, columns: 10)
        s.put("##########", row: 0, column: 0)
        let end = s.put("ab👨‍👩‍👧", row: 0, column: 0, limit: 6)
        XCTAssertEqual(end, 6)
        XCTAssertEqual(s.line(0), "ab    ####")
        s.put("abcdeक्षि", row: 0, column: 0, limit: 7)
        XCTAssertEqual(s.line(0), "abcde  ###")
        s.put("abcdefghi漢", row: 0, column: 0)
        XCTAssertEqual(s.line(0), "abcdefghi")
        XCTAssertEqual((0..<10).filter { s[0, $0].isContinuation }.count, 0)
    }

    /// Changing any column of a cluster rewrites the whole cluster, never a half.
    func testDiffRewritesWholeClusters() {
        var old = Screen(rows: 1, columns: 12)
        old.put("a👨‍👩‍👧b", row: 0, column: 0)
        var new = old
        new.put("x", row: 0, column: 7)
        var runs = ScreenDiff.runs(from: old, to: new)
        XCTAssertEqual(runs.map(\.column), [7])
        new = old
        new.put("👨‍👩‍👦", row: 0, column: 1)
        runs = ScreenDiff.runs(from: old, to: new)
        XCTAssertEqual(runs.count, 1)
        XCTAssertEqual(runs.first?.column, 1)
        XCTAssertEqual(runs.first?.text, "👨‍👩‍👦")
        new = old
        new.put("zz", row: 0, column: 3)
        runs = ScreenDiff.runs(from: old, to: new)
        XCTAssertEqual(runs.first?.column, 1, "a change inside the family rewrites from its first column")
    }
}
