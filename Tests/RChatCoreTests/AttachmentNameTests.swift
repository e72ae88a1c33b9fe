import XCTest
@testable import RChatCore

/// Names other people give files become one safe file name: no path, nothing that
/// misleads on screen, no hidden file, at most 255 bytes cut between characters with the
/// extension kept; and a name already taken is numbered.
final class AttachmentNameTests: XCTestCase {
    func testPathsNeverLeaveTheDirectory() {
        XCTAssertEqual(AttachmentName.sanitised("../../etc/passwd"), "passwd")
        XCTAssertEqual(AttachmentName.sanitised("..\\..\\windows\\win.ini"), "win.ini")
        XCTAssertEqual(AttachmentName.sanitised("/etc/passwd"), "passwd")
        XCTAssertEqual(AttachmentName.sanitised("a/b.pdf"), "b.pdf")
        XCTAssertEqual(AttachmentName.sanitised("report.pdf/"), "report.pdf", "the last part that leaves something")
        XCTAssertEqual(AttachmentName.sanitised("notes/../.."), "notes")
        XCTAssertEqual(AttachmentName.sanitised("../../.bashrc\u{1B}[2J"), "bashrc[2J")
        XCTAssertEqual(AttachmentName.sanitised("a/\u{202E}/ /b\u{0}"), "b")
        for hostile in ["../../etc/passwd", "/", "\\", "..", ".", "...", "./.", "../", "..\\..", "a/../../b"] {
            let name = AttachmentName.sanitised(hostile)
            XCTAssertFalse(name.contains("/") || name.contains("\\"), "\(hostile.debugDescription) → \(name.debugDescription)")
            XCTAssertFalse(name.hasPrefix("."), "\(hostile.debugDescription) → \(name.debugDescription)")
            XCTAssertFalse(name.isEmpty)
        }
    }

    func testDotsAndEmptyNamesBecomeFile() {
        for name in ["", ".", "..", "...", " ", " . ", "\u{0}", "\u{1b}\u{7}\u{7f}\u{85}\u{9b}", "\u{202E}\u{2066}", "\n\t\r", ". .. ."] {
            XCTAssertEqual(AttachmentName.sanitised(name), "file", name.debugDescription)
        }
        XCTAssertEqual(AttachmentName.sanitised(".bashrc"), "bashrc", "no hidden files")
        XCTAssertEqual(AttachmentName.sanitised("...pdf"), "pdf")
        XCTAssertEqual(AttachmentName.sanitised("  report.pdf  "), "report.pdf")
        XCTAssertEqual(AttachmentName.sanitised(" . hidden"), "hidden")
        // A dot carrying a combining mark is still a dot on disk.
        XCTAssertEqual(AttachmentName.sanitised(".\u{301}profile"), "profile")
        XCTAssertEqual(AttachmentName.sanitised("..\u{301}\u{20DD}"), "file")
    }

    func testControlCharactersAndDirectionControlsAreDropped() {
        // The override would show "exe.pdf" for a program; dropped, the name says what it is.
        XCTAssertEqual(AttachmentName.sanitised("\u{202E}fdp.exe"), "fdp.exe")
        XCTAssertEqual(AttachmentName.sanitised("photo\u{202E}gpj.exe"), "photogpj.exe")
        XCTAssertEqual(AttachmentName.sanitised("a\u{202A}b\u{202B}c\u{202C}d\u{202D}e\u{2066}f\u{2067}g\u{2068}h\u{2069}i"), "abcdefghi")
        XCTAssertEqual(AttachmentName.sanitised("a\u{200E}b\u{200F}c\u{61C}d\u{2028}e\u{2029}f"), "abcdef")
        XCTAssertEqual(AttachmentName.sanitised("a\u{0}b\u{1b}[31mc\u{7f}d\u{80}e\u{9f}f\nx\ty"), "ab[31mcdefxy")
        // Everything else stays: letters of any script, emoji, combining marks, spaces inside.
        XCTAssertEqual(AttachmentName.sanitised("Résumé 東京 🙂 é.pdf"), "Résumé 東京 🙂 é.pdf")
        XCTAssertEqual(AttachmentName.sanitised("a\u{200D}b"), "a\u{200D}b", "a joiner is not a direction control")
    }

    func testLongNamesAreCutBetweenCharactersKeepingTheExtension() {
        // 300 bytes of CJK (3 bytes each) and an extension.
        let cjk = String(repeating: "漢", count: 100)
        let name = AttachmentName.sanitised(cjk + ".pdf")
        XCTAssertLessThanOrEqual(name.utf8.count, 255)
        XCTAssertEqual(name, String(repeating: "漢", count: 83) + ".pdf", "83 × 3 + 4 = 253: the 84th does not fit")
        XCTAssertEqual(AttachmentName.sanitised(cjk), String(repeating: "漢", count: 85))
        // Characters of several scalars are kept whole or not at all.
        let flags = String(repeating: "🇯🇵", count: 40) // 8 bytes each
        let cut = AttachmentName.sanitised(flags + ".png")
        XCTAssertEqual(cut, String(repeating: "🇯🇵", count: 31) + ".png")
        let accented = String(repeating: "e\u{301}", count: 100) // 3 bytes each
        XCTAssertEqual(AttachmentName.sanitised(accented + ".txt"), String(repeating: "e\u{301}", count: 83) + ".txt")
        // A cut that lands after a space does not leave it at the end.
        let spaced = String(repeating: "a", count: 250) + " bcdefgh.pdf"
        XCTAssertEqual(AttachmentName.sanitised(spaced), String(repeating: "a", count: 250) + ".pdf")
        // A tail too long to be an extension is cut like the rest.
        let longTail = "a." + String(repeating: "b", count: 300)
        XCTAssertEqual(AttachmentName.sanitised(longTail), "a." + String(repeating: "b", count: 253))
        // One character longer than the limit leaves nothing of itself.
        let oneHugeCharacter = "e" + String(repeating: "\u{301}", count: 200) // 401 bytes, one cluster
        XCTAssertEqual(oneHugeCharacter.count, 1)
        XCTAssertEqual(AttachmentName.sanitised(oneHugeCharacter + ".pdf"), "file.pdf")
        XCTAssertEqual(AttachmentName.sanitised(oneHugeCharacter), "file")
        // Exactly 255 bytes stays as it is.
        let exact = String(repeating: "x", count: 251) + ".pdf"
        XCTAssertEqual(AttachmentName.sanitised(exact), exact)
    }

    func testEveryResultIsSafeForManyHostileNames() {
        let pieces = ["..", ".", "/", "\\", " ", "\u{202E}", "\u{0}", "\u{7f}", "\u{9b}", "漢", "e\u{301}", "🙂", "a", ".pdf", "\u{2066}",
                      ".\u{301}", " \u{20DD}", "\u{301}", "\u{3000}"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let name = (0..<Int.random(in: 0...120, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let safe = AttachmentName.sanitised(name)
            XCTAssertFalse(safe.isEmpty || safe == "." || safe == "..", name.debugDescription)
            XCTAssertLessThanOrEqual(safe.utf8.count, 255, name.debugDescription)
            let first = safe.unicodeScalars.first!, last = safe.unicodeScalars.last!
            XCTAssertFalse(first == "." || first.properties.isWhitespace || last.properties.isWhitespace, name.debugDescription)
            XCTAssertFalse(safe.unicodeScalars.contains { $0 == "/" || $0 == "\\" || $0.value < 0x20 || (0x7F...0x9F).contains($0.value)
                || (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) }, name.debugDescription)
            XCTAssertEqual(AttachmentName.sanitised(safe), safe, "sanitising twice changes nothing: \(name.debugDescription)")
        }
    }

    func testUniqueNumbersBeforeTheExtension() {
        XCTAssertEqual(AttachmentName.unique("a.pdf") { _ in false }, "a.pdf")
        let taken: Set = ["a.pdf", "a (2).pdf", "notes", "notes (2)", "notes (3)", ".profile", "archive.tar.gz"]
        XCTAssertEqual(AttachmentName.unique("a.pdf") { taken.contains($0) }, "a (3).pdf")
        XCTAssertEqual(AttachmentName.unique("notes") { taken.contains($0) }, "notes (4)", "no extension: at the end")
        XCTAssertEqual(AttachmentName.unique(".profile") { taken.contains($0) }, ".profile (2)", "a dotfile has no extension")
        XCTAssertEqual(AttachmentName.unique("archive.tar.gz") { taken.contains($0) }, "archive.tar (2).gz")
        var asked: [String] = []
        _ = AttachmentName.unique("b.txt") { asked.append($0); return asked.count < 4 }
        XCTAssertEqual(asked, ["b.txt", "b (2).txt", "b (3).txt", "b (4).txt"])
    }

    func testUniqueNamesStayWithinTheLimit() {
        let long = String(repeating: "漢", count: 83) + ".pdf" // 253 bytes
        let second = AttachmentName.unique(long) { $0 == long }
        XCTAssertEqual(second, String(repeating: "漢", count: 82) + " (2).pdf", "82 × 3 + 4 + 4 = 254")
        XCTAssertLessThanOrEqual(second.utf8.count, 255)
        var seen: Set<String> = []
        for _ in 0..<120 {
            let next = AttachmentName.unique(long) { seen.contains($0) }
            XCTAssertLessThanOrEqual(next.utf8.count, 255)
            XCTAssertTrue(seen.insert(next).inserted, "\(next) given twice")
        }
        XCTAssertTrue(seen.contains(String(repeating: "漢", count: 82) + " (99).pdf"))
        XCTAssertTrue(seen.contains(String(repeating: "漢", count: 81) + " (100).pdf"))
    }
}
