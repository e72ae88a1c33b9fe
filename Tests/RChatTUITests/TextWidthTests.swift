import XCTest
@testable import RChatTUI

final class TextWidthTests: XCTestCase {
    func testColumnsOfScripts() {
        XCTAssertEqual(TextWidth.columns(of: "abc"), 3)
        XCTAssertEqual(TextWidth.columns(of: "漢字"), 4)
        XCTAssertEqual(TextWidth.columns(of: "한국어"), 6)
        XCTAssertEqual(TextWidth.columns(of: "😀"), 2)
        XCTAssertEqual(TextWidth.columns(of: "❤️"), 2, "emoji presentation selector")
        XCTAssertEqual(TextWidth.columns(of: "👨‍👩‍👧"), 2, "a ZWJ sequence is one picture")
        XCTAssertEqual(TextWidth.columns(of: "👍🏽"), 2, "skin tone modifier")
        XCTAssertEqual(TextWidth.columns(of: "🇫🇷🇯🇵"), 4, "flags")
        XCTAssertEqual(TextWidth.columns(of: "e\u{301}te\u{301}"), 3, "combining marks add nothing")
        XCTAssertEqual(TextWidth.columns(of: "ü"), 1)
    }

    func testControlsAreNeutralised() {
        // A message can never send an escape sequence to the terminal.
        XCTAssertTrue(TextWidth.displayed("\u{1B}", asciiOnly: false) == ("\u{241B}", 1), "ESC shows as its picture ␛")
        XCTAssertEqual(TextWidth.displayed("\u{1B}", asciiOnly: true).0, "?")
        XCTAssertTrue(TextWidth.displayed("\u{9B}", asciiOnly: false) == ("\u{FFFD}", 1), "C1 CSI")
        // A direction override or isolate is shown, not obeyed and not hidden.
        for control in ["\u{202E}", "\u{2066}", "\u{2069}", "\u{200F}"] {
            XCTAssertTrue(TextWidth.displayed(Character(control), asciiOnly: false) == ("\u{FFFD}", 1), control.debugDescription)
        }
        XCTAssertEqual(TextWidth.displayed("\u{200D}", asciiOnly: false).1, 0, "a lone joiner is not drawn")
        XCTAssertEqual(TextWidth.displayed("\t", asciiOnly: false).0, " ")
    }

    func testASCIIModeStandsIn() {
        XCTAssertEqual(TextWidth.displayed("漢", asciiOnly: true).0, "?")
        XCTAssertEqual(TextWidth.displayed("\u{2019}", asciiOnly: true).0, "'")
        XCTAssertEqual(TextWidth.displayed("漢", asciiOnly: true).1, 1)
    }
}
