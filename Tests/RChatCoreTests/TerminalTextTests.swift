import Foundation
import RChatCore
import XCTest

final class TerminalTextTests: XCTestCase {
    /// Every scalar a terminal acts on, from the C0 and C1 blocks, DEL and the direction and
    /// format characters.
    static let hostile: [Unicode.Scalar] = (0x00...0x1F).map { Unicode.Scalar($0)! } + [Unicode.Scalar(0x7F)!]
        + (0x80...0x9F).map { Unicode.Scalar($0)! }
        + [0x061C, 0x200B, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2028, 0x2029,
           0x2060, 0x2066, 0x2067, 0x2068, 0x2069, 0xFEFF, 0xFFF9, 0xE0001].map { Unicode.Scalar($0)! }

    func testNothingATerminalActsOnSurvivesOnOneLine() {
        for scalar in Self.hostile {
            let out = TerminalText.sanitized("a\(scalar)b", breaks: .shown)
            XCTAssertFalse(out.unicodeScalars.contains(scalar), "U+\(String(scalar.value, radix: 16)) passed through")
            XCTAssertEqual(out.unicodeScalars.count, 3, "U+\(String(scalar.value, radix: 16)) has one visible stand-in: \(out)")
            XCTAssertTrue(TerminalText.isSafe(out, breaks: .shown))
        }
    }

    func testStandInsAreTheControlPicturesOrTheReplacementCharacter() {
        XCTAssertEqual(TerminalText.sanitized("\u{1B}]0;pwned\u{07}\u{1B}[2J", breaks: .shown), "\u{241B}]0;pwned\u{2407}\u{241B}[2J")
        XCTAssertEqual(TerminalText.sanitized("\u{0}\u{7F}\u{9B}31m", breaks: .shown), "\u{2400}\u{2421}\u{FFFD}31m")
        XCTAssertEqual(TerminalText.sanitized("abc\u{202E}gnp.exe\u{2066}x\u{2069}", breaks: .shown), "abc\u{FFFD}gnp.exe\u{FFFD}x\u{FFFD}")
    }

    func testLineBreaksAndTabsDependOnWhereTheTextGoes() {
        let text = "one\ntwo\r\nthree\rfour\u{2028}five\tsix"
        XCTAssertEqual(TerminalText.sanitized(text, breaks: .kept), "one\ntwo\nthree\u{240D}four\nfive\tsix")
        XCTAssertEqual(TerminalText.sanitized(text, breaks: .shown), "one\u{2424}two\u{2424}three\u{240D}four\u{2424}five\u{2409}six")
        XCTAssertTrue(TerminalText.isSafe("one\ntwo\tthree", breaks: .kept))
        XCTAssertFalse(TerminalText.isSafe("one\ntwo", breaks: .shown))
    }

    func testOrdinaryTextIsLeftAlone() {
        for text in ["Sam", "Zoë — «ça va?»", "שלום עולם", "سلام", "日本語", "👩‍👩‍👧 🇫🇷 👍🏽", "🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}",
                     "می\u{200C}خواهم", "Silben\u{00AD}trennung", "e\u{0301}"] {
            XCTAssertEqual(TerminalText.sanitized(text, breaks: .shown), text)
            XCTAssertTrue(TerminalText.isSafe(text, breaks: .shown), text)
        }
    }

    func testSanitizingTwiceChangesNothingMore() {
        let once = TerminalText.sanitized("x\u{1B}[1m\r\n\u{202E}\u{85}", breaks: .shown)
        XCTAssertEqual(TerminalText.sanitized(once, breaks: .shown), once)
        XCTAssertEqual(TerminalText.sanitized(once, breaks: .kept), once)
    }

    func testJSONEscapesEveryControlAndStillDecodesToTheText() throws {
        let text = String(String.UnicodeScalarView(Self.hostile)) + "é🙂"
        let line = JSONLine.object([("text", .string(text))])
        for scalar in line.unicodeScalars {
            XCTAssertNil(TerminalText.standIn(for: scalar), "raw U+\(String(scalar.value, radix: 16)) in the JSON line")
        }
        XCTAssertTrue(line.contains(#"\u009b"#), line)
        XCTAssertTrue(line.contains(#"\u202e"#), line)
        XCTAssertTrue(line.contains(#"\udb40\udc01"#), "above U+FFFF: a surrogate pair; \(line)")
        let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        XCTAssertEqual(parsed?["text"] as? String, text)
    }
}
