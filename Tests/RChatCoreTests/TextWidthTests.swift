import CWidth
import Glibc
import RChatCore
import XCTest

final class TextWidthTests: XCTestCase {
    /// A sample: its columns, what the C library's `wcswidth` says of it (nil: -1, not
    /// printable or unknown to it), the form sent to a terminal, and why the columns differ
    /// from `wcswidth`, when they do.
    struct Sample {
        let text: String
        let name: String
        let columns: Int
        let c: Int?
        let sent: String?
        let why: String?

        init(_ text: String, _ name: String, columns: Int, c: Int?, sent: String? = nil, why: String? = nil) {
            self.text = text; self.name = name; self.columns = columns; self.c = c; self.sent = sent; self.why = why
        }
    }

    static let samples: [Sample] = [
        Sample("abc", "ASCII", columns: 3, c: 3),
        Sample("漢字", "CJK", columns: 4, c: 4),
        Sample("한국어", "Hangul syllables", columns: 6, c: 6),
        Sample("\u{1112}\u{1161}\u{11AB}", "Hangul jamo L V T: one cluster", columns: 2, c: 2),
        Sample("😀", "emoji", columns: 2, c: 2),
        Sample("❤️", "text-default emoji + VS16", columns: 1, c: 1, sent: "❤"),
        Sample("❤︎", "text-default emoji + VS15", columns: 1, c: 1, sent: "❤"),
        Sample("😀︎", "wide emoji + VS15", columns: 2, c: 2, sent: "😀"),
        Sample("👍🏽", "skin tone", columns: 4, c: 4),
        Sample("👨‍👩‍👧", "ZWJ family", columns: 6, c: 6, sent: "👨👩👧"),
        Sample("👩🏽‍💻", "ZWJ with a skin tone", columns: 6, c: 6, sent: "👩🏽💻"),
        Sample("🇫🇷", "flag", columns: 2, c: 2),
        Sample("1️⃣", "keycap", columns: 1, c: 1, sent: "1\u{20E3}"),
        Sample("🏴󠁧󠁢󠁳󠁣󠁴󠁿", "tag sequence (Scotland)", columns: 2, c: 2, sent: "🏴"),
        Sample("e\u{301}", "one combining mark", columns: 1, c: 1),
        Sample("e" + String(repeating: "\u{301}\u{316}", count: 8), "Zalgo: sixteen marks on one base", columns: 1, c: 1),
        Sample("नमस्ते", "Devanagari", columns: 4, c: 4),
        Sample("क्षि", "Devanagari conjunct with a spacing vowel sign: one cluster", columns: 3, c: 3),
        Sample("ไทย", "Thai", columns: 3, c: 3),
        Sample("\u{0E01}\u{0E33}", "Thai with SARA AM, a spacing mark: one cluster", columns: 2, c: 2),
        Sample("\u{200D}", "a lone zero-width joiner", columns: 0, c: 0, sent: ""),
        Sample("🇫", "a lone regional indicator", columns: 1, c: 1, sent: "\u{FFFD}",
               why: "same width, but shown as \u{FFFD}: emoji-aware terminals draw it 2 columns"),
        Sample("\u{1FAE8}", "an emoji newer than this C library (Unicode 15)", columns: 1, c: nil, sent: "\u{FFFD}",
               why: "unknown to the C library: tmux 3.3 draws nothing, newer terminals 2; shown as \u{FFFD}"),
        Sample("\u{301}", "a mark with no base", columns: 1, c: 0, sent: "\u{25CC}\u{301}",
               why: "drawn on a dotted circle, so the mark is seen and takes a column"),
        // Found by the fuzzer (Fuzz/Corpus/paste/lone-jamo): it crashed every view drawing it.
        Sample("\u{1161}", "a lone Hangul vowel jamo", columns: 1, c: 0, sent: "\u{FFFD}",
               why: "zero columns, but not a mark a dotted circle carries (the two are two clusters): shown as \u{FFFD}"),
        Sample("a\u{D7D1}", "a letter, then a lone Hangul final consonant", columns: 2, c: 1, sent: "a\u{FFFD}",
               why: "the consonant joins nothing before it: shown as \u{FFFD}, one column"),
        Sample("\u{AD}", "soft hyphen", columns: 0, c: 1, sent: "",
               why: "an invisible hint to break a word: not drawn at all"),
        Sample("a\u{200B}b", "zero-width space", columns: 3, c: 2, sent: "a\u{FFFD}b",
               why: "an invisible format character, shown as TerminalText's stand-in"),
        Sample("\u{1B}[2J", "an escape sequence", columns: 4, c: nil, sent: "\u{241B}[2J",
               why: "a control, shown as its picture"),
        Sample(String(repeating: "\u{1100}", count: 20), "twenty conjoining jamo: one cluster of 40 columns", columns: 1, c: 40,
               sent: "\u{FFFD}", why: "wider than TextWidth.widest: hostile or broken, shown as \u{FFFD}"),
    ]

    /// The C library's answer in a UTF-8 locale.
    static func wcswidth(_ text: String) -> Int? {
        let locale = newlocale(Int32(LC_CTYPE_MASK), "C.UTF-8", nil)
        defer { if let locale { freelocale(locale) } }
        let scalars = text.unicodeScalars.map(\.value)
        let w = Int(scalars.withUnsafeBufferPointer { rchat_wcswidth_in(locale, $0.baseAddress, $0.count) })
        return w < 0 ? nil : w
    }

    /// What a terminal is sent for the text: each cluster's shown form.
    static func sent(_ text: String) -> String {
        text.map { ch -> String in
            let (shown, width) = TextWidth.displayed(ch, asciiOnly: false)
            return width == 0 ? "" : TextWidth.terminalForm(of: shown)
        }.joined()
    }

    /// Every sample against the C library: the same columns, or a documented reason; and
    /// what is sent has, to the C library (and so to ncurses and tmux 3.3), exactly the
    /// columns the view gives it, which is what keeps the next column in place.
    func testEverySampleAgainstTheCLibrary() {
        for s in Self.samples {
            XCTAssertEqual(TextWidth.columns(of: s.text), s.columns, s.name)
            XCTAssertEqual(Self.wcswidth(s.text), s.c, "\(s.name): the C library's answer changed")
            if s.c != s.columns { XCTAssertNotNil(s.why, "\(s.name): differs from wcswidth without a reason") }
            let sent = Self.sent(s.text)
            XCTAssertEqual(sent, s.sent ?? s.text, s.name)
            XCTAssertEqual(Self.wcswidth(sent) ?? -1, s.columns, "\(s.name): what is sent takes other columns than the view gives it")
        }
    }

    /// A cluster is one unit: columns of a string are the sum of its clusters' columns.
    func testEveryClusterIsOneUnit() {
        // (A sample that starts with a mark would join the separator before it.)
        let whole = Self.samples.filter { $0.text.unicodeScalars.first!.properties.generalCategory != .nonspacingMark }
        let text = whole.map(\.text).joined(separator: "|")
        XCTAssertEqual(TextWidth.columns(of: text), whole.map(\.columns).reduce(0, +) + whole.count - 1)
        XCTAssertEqual(Array("👨‍👩‍👧").count, 1)
        XCTAssertEqual(Array("क्षि").count, 1)
        XCTAssertEqual(Array("e" + String(repeating: "\u{301}", count: 16)).count, 1)
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
        XCTAssertEqual(TextWidth.displayed("👨‍👩‍👧", asciiOnly: true).1, 1)
    }

    /// Command-line columns: padded by display columns, never by characters or bytes.
    func testPaddingCountsColumns() {
        let names = ["Sam", "山田太郎", "👨‍👩‍👧 Family", "Zoe\u{308}", "❤️ Ann"]
        let padded = names.map { TextWidth.padded($0, to: 14) + "|" }
        for line in padded {
            // Each line, as sent, is 14 columns to the C library before the bar.
            XCTAssertEqual(Self.wcswidth(String(line.dropLast())), 14, line)
        }
        XCTAssertEqual(TextWidth.padded("山田", to: 6), "山田  ")
        XCTAssertEqual(TextWidth.padded("👨‍👩‍👧", to: 7), "👨👩👧 ")
        XCTAssertEqual(TextWidth.padded("Zoe\u{308}", to: 4), "Zoe\u{308} ")
        XCTAssertEqual(TextWidth.padded("\u{1B}x", to: 3), "\u{241B}x ")
    }
}
