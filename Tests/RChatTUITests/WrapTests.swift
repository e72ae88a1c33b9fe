import XCTest
import RChatCore
@testable import RChatTUI

final class WrapTests: XCTestCase {
    func testBreaksAtSpaces() {
        XCTAssertEqual(Wrap.lines("hello world foo", width: 11), ["hello world", "foo"])
        XCTAssertEqual(Wrap.lines("hello world foo", width: 8), ["hello", "world", "foo"])
    }

    func testSplitsALongWordBetweenGraphemes() {
        XCTAssertEqual(Wrap.lines("abcdefghij", width: 4), ["abcd", "efgh", "ij"])
    }

    func testKeepsNewlinesAndEmptyText() {
        XCTAssertEqual(Wrap.lines("one\ntwo", width: 10), ["one", "two"])
        XCTAssertEqual(Wrap.lines("", width: 10), [""])
    }

    func testWideCharactersNeverOverflow() {
        XCTAssertEqual(Wrap.lines("漢字漢字漢", width: 5), ["漢字", "漢字", "漢"])
        let mixed = "Bonjour 🇫🇷 漢字 e\u{301}te\u{301} 👨‍👩‍👧 family 😀😀😀 ok"
        // From the widest cluster's width (the family: 6 columns, one picture per person).
        for width in 6...20 {
            let lines = Wrap.lines(mixed, width: width)
            for line in lines { XCTAssertLessThanOrEqual(TextWidth.columns(of: line), width, "\(line) at \(width)") }
            // Nothing lost but the spaces where lines broke.
            XCTAssertEqual(lines.joined().filter { $0 != " " }, mixed.filter { $0 != " " })
        }
    }

    func testTruncateWithEllipsis() {
        XCTAssertEqual(Wrap.truncate("Samantha", width: 5), "Sama…")
        XCTAssertEqual(Wrap.truncate("Sam", width: 5), "Sam")
        XCTAssertEqual(Wrap.truncate("漢字漢字", width: 5), "漢字…")
        XCTAssertEqual(Wrap.truncate("Samantha", width: 6, ellipsis: "..."), "Sam...")
        XCTAssertEqual(Wrap.pad("ab", width: 4), "ab  ")
    }

    /// Clusters of every kind, each one unit.
    static let clusters = ["漢", "❤️", "😀︎", "👍🏽", "👨‍👩‍👧", "🇫🇷", "🇫", "1️⃣", "\u{1112}\u{1161}\u{11AB}",
                           "e" + String(repeating: "\u{301}\u{316}", count: 8), "क्षि", "\u{0E01}\u{0E33}"]

    /// A cluster never splits across lines, and one that does not fit at the end of a line
    /// moves to the next whole: every line fits, and the clusters come back in order.
    func testClustersWrapAsUnits() {
        let text = Self.clusters.joined(separator: "x")
        for width in 6...24 {
            let lines = Wrap.lines(text, width: width)
            for line in lines { XCTAssertLessThanOrEqual(TextWidth.columns(of: line), width, "\(line) at \(width)") }
            XCTAssertEqual(lines.flatMap { Array($0) }, Array(text), "at \(width)")
        }
        // The family (6 columns) after 3 columns on a line of 8 goes to the next line.
        XCTAssertEqual(Wrap.lines("abc👨‍👩‍👧", width: 8), ["abc", "👨‍👩‍👧"])
        // The three-column conjunct after 5 columns on a line of 7.
        XCTAssertEqual(Wrap.lines("abcdeक्षि", width: 7), ["abcde", "क्षि"])
    }

    func testTruncationKeepsClustersWhole() {
        XCTAssertEqual(Wrap.truncate("👨‍👩‍👧👨‍👩‍👧", width: 8), "👨‍👩‍👧…")
        XCTAssertEqual(Wrap.truncate("ab👍🏽cd", width: 7), "ab👍🏽…")
        XCTAssertEqual(Wrap.truncate("ab👍🏽cd", width: 6), "ab…")
        let zalgo = "e" + String(repeating: "\u{301}", count: 12)
        XCTAssertEqual(Wrap.truncate(zalgo + zalgo + "abc", width: 3), zalgo + zalgo + "…", "every mark kept")
        for width in 1...12 {
            XCTAssertLessThanOrEqual(TextWidth.columns(of: Wrap.pad(Self.clusters.joined(), width: width)), width)
            XCTAssertEqual(TextWidth.columns(of: Wrap.pad(Self.clusters.joined(), width: width)), width)
        }
    }
}
