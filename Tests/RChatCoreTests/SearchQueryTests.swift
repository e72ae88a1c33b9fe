import XCTest
@testable import RChatCore

/// What the user types to search for becomes words: whitespace, controls and format
/// characters separate them; a word without a letter or digit is dropped.
final class SearchQueryTests: XCTestCase {
    func testWordsAreSplitAtWhitespaceControlsAndFormatCharacters() throws {
        XCTAssertEqual(try SearchQuery("  quick\tquestion\nnow ").words, ["quick", "question", "now"])
        XCTAssertEqual(try SearchQuery("a\u{0}b\u{1b}c\u{202e}d\u{2028}e").words, ["a", "b", "c", "d", "e"])
        XCTAssertEqual(try SearchQuery("\"quoted\" NEAR(x) -minus a*").words, ["\"quoted\"", "NEAR(x)", "-minus", "a*"])
        XCTAssertEqual(try SearchQuery("café 東京 ٣").words, ["café", "東京", "٣"], "letters and digits of any script")
    }

    func testPunctuationOnlyWordsAreDroppedAndNoWordsIsRefused() throws {
        XCTAssertEqual(try SearchQuery("- hello * \"\" world :").words, ["hello", "world"])
        for text in ["", "   ", "- * \" ( )", "\u{0}", "🙂 ✓"] {
            XCTAssertThrowsError(try SearchQuery(text), text.debugDescription) { XCTAssertEqual($0 as? SearchQueryError, .noWords) }
        }
    }

    func testAtMostSixteenWords() throws {
        XCTAssertEqual(try SearchQuery(Array(repeating: "w", count: 16).joined(separator: " ")).words.count, 16)
        XCTAssertThrowsError(try SearchQuery(Array(repeating: "w", count: 17).joined(separator: " "))) {
            XCTAssertEqual($0 as? SearchQueryError, .tooManyWords(17))
        }
    }
}
