import XCTest
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
        for width in 2...20 {
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
}
