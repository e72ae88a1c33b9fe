import XCTest
import RChatCore
@testable import RChatTUI

final class GlyphTests: XCTestCase {
    /// Sam's conversation: a message from him (if any), then one of yours in each status,
    /// "is Sending", "is Sent" and so on.
    static func everyStatus(from incoming: String? = nil) -> FakeChatModel {
        let model = FakeChatModel()
        model.contact("Sam")
        if let incoming { model.addMessage("Sam", .incoming, incoming) }
        for s in MessageStatus.allCases { model.addMessage("Sam", .outgoing, "is \(s.rawValue)", status: s) }
        return model
    }

    /// What is left when colour is switched off (NO_COLOR): glyph and attributes.
    private func withoutColour(_ g: Glyphs, _ s: MessageStatus) -> String {
        let (text, style) = g.status(s)
        return "\(text)|b\(style.bold)|r\(style.reverse)|u\(style.underline)|d\(style.dim)"
    }

    func testEveryStatusIsDistinctWithoutColour() {
        for glyphs in [Glyphs.unicode, Glyphs.ascii] {
            let shown = MessageStatus.allCases.map { withoutColour(glyphs, $0) }
            XCTAssertEqual(Set(shown).count, MessageStatus.allCases.count, "\(shown)")
        }
    }

    func testASCIIStatusesAreDistinctByTextAlone() {
        let texts = MessageStatus.allCases.map { Glyphs.ascii.status($0).text }
        XCTAssertEqual(Set(texts).count, texts.count)
        XCTAssertTrue(texts.allSatisfy { $0.allSatisfy(\.isASCII) })
    }

    /// The seeds' glyphs as near as the terminal fonts allow (FontCoverageTests): clock,
    /// tick, tick in a circle, filled tick in a circle, exclamation mark.
    func testSuggestedUnicodeGlyphs() {
        let g = Glyphs.unicode
        XCTAssertEqual(g.status(.sending).text, "…")
        XCTAssertEqual(g.status(.sent).text, "√")
        XCTAssertEqual(g.status(.delivered).text, "√√")
        XCTAssertEqual(g.status(.read).text, "√√")
        XCTAssertTrue(g.status(.read).style.reverse)
        XCTAssertFalse(g.status(.delivered).style.reverse)
        XCTAssertEqual(g.status(.notConfirmed).text, "…?")
        XCTAssertEqual(g.status(.notDelivered).text, "!")
        XCTAssertEqual(g.status(.failedToSend).text, "×!")
        for s in MessageStatus.allCases { XCTAssertLessThanOrEqual(TextWidth.columns(of: g.status(s).text), 2) }
    }

    /// Delivered and Read tell apart at a glance (a screenshot): Read is a reversed block.
    func testDeliveredAndReadDifferByMoreThanColour() {
        for glyphs in [Glyphs.unicode, Glyphs.ascii] {
            let delivered = glyphs.status(.delivered), read = glyphs.status(.read)
            XCTAssertTrue(delivered.text != read.text || delivered.style.reverse != read.style.reverse)
        }
    }

    /// The help legend draws each status as a message line does: the same cells, glyph and
    /// attributes (colour role too), in both glyph sets.
    func testHelpLegendDrawsEachStatusAsAMessageLineDoes() {
        for glyphs in [Glyphs.unicode, Glyphs.ascii] {
            let model = Self.everyStatus()
            let view = makeView(model, rows: 200, columns: 100, glyphs: glyphs, open: "Sam")
            let lines = view.frame()
            view.press(.function(1))
            let help = view.frame()
            guard let header = help.position(of: "Statuses") else { return XCTFail(help.dump) }
            for (n, s) in MessageStatus.allCases.enumerated() {
                guard let row = lines.position(of: "is \(s.rawValue)")?.row else { return XCTFail(lines.dump) }
                let width = TextWidth.columns(of: glyphs.status(s).text)
                let onLine = (0..<width).map { lines[row, 100 - 2 + $0] }
                let legendRow = header.row + 1 + n
                let legend = (0..<width).map { help[legendRow, header.column + $0] }
                XCTAssertEqual(legend, onLine, "\(s): legend \(help.line(legendRow)) vs line \(lines.line(row))")
                XCTAssertTrue(help.line(legendRow).contains(s.rawValue), help.line(legendRow))
            }
        }
    }

    func testStatusesOnScreenInBothSets() {
        for glyphs in [Glyphs.unicode, Glyphs.ascii] {
            let model = Self.everyStatus()
            let view = makeView(model, rows: 30, columns: 80, glyphs: glyphs, open: "Sam")
            let screen = view.frame()
            for s in MessageStatus.allCases {
                guard let row = screen.position(of: "is \(s.rawValue)")?.row else { return XCTFail(screen.dump) }
                let g = glyphs.status(s)
                let found = screen.position(of: g.text)
                XCTAssertNotNil(found)
                // The glyph sits at the right edge of the message's first line, with its attributes.
                let col = 80 - 2
                XCTAssertEqual(String(screen[row, col].character) + (g.text.count > 1 ? String(screen[row, col + 1].character) : ""),
                               g.text, "\(s): \(screen.line(row))")
                XCTAssertEqual(screen[row, col].style.bold, g.style.bold)
                XCTAssertEqual(screen[row, col].style.reverse, g.style.reverse)
            }
            if !glyphs.isUnicode {
                XCTAssertTrue(screen.text.joined().allSatisfy(\.isASCII), screen.dump)
            }
        }
    }

    /// The README's status table and its ASCII list say what the view draws: each glyph,
    /// and "reversed", "bold", "underlined" exactly where the style has them.
    func testTheREADMESaysWhatTheViewDraws() throws {
        let readme = try String(contentsOf: FontCoverageTests.root.appendingPathComponent("README.md"), encoding: .utf8)
        let flat = readme.replacingOccurrences(of: "\n", with: " ")
        for s in MessageStatus.allCases {
            let (text, style) = Glyphs.unicode.status(s)
            guard let row = readme.split(separator: "\n").first(where: { $0.hasPrefix("| \(s.rawValue) | ") }) else {
                return XCTFail("no README row for \(s.rawValue)")
            }
            let cell = row.split(separator: "|")[1].trimmingCharacters(in: .whitespaces)
            let words = [style.reverse ? "reversed" : nil, style.bold ? "bold" : nil, style.underline ? "underlined" : nil].compactMap { $0 }
            XCTAssertEqual(cell, (["`\(text)`"] + words).joined(separator: " "), "README: \(row)")
            XCTAssertTrue(flat.contains("`\(Glyphs.ascii.status(s).text)` \(s.rawValue)"), "README's ASCII list: \(s.rawValue)")
        }
    }

    /// `rchat settings glyphs ascii`: the view's own glyphs are ASCII in a UTF-8 terminal
    /// too, at start and when the setting changes while it runs; what Sam wrote still draws
    /// as he wrote it.
    func testGlyphsSettingASCIIInAUnicodeTerminal() {
        let model = Self.everyStatus(from: "Grüße aus Köln ✓")
        model.settings = ViewSettings(glyphs: .ascii)
        let view = makeView(model, rows: 30, columns: 80, glyphs: .unicode, open: "Sam")
        XCTAssertFalse(view.state.glyphs.isUnicode)
        func chrome(_ screen: Screen) -> String {
            screen.text.joined(separator: "\n").replacingOccurrences(of: "Grüße aus Köln ✓", with: "")
        }
        var screen = view.frame()
        XCTAssertTrue(screen.contains("Grüße aus Köln ✓"), screen.dump)
        XCTAssertTrue(chrome(screen).allSatisfy(\.isASCII), screen.dump)
        for s in MessageStatus.allCases {
            guard let row = screen.position(of: "is \(s.rawValue)")?.row else { return XCTFail(screen.dump) }
            XCTAssertTrue(screen.line(row).hasSuffix(" " + Glyphs.ascii.status(s).text), screen.line(row))
        }
        view.press(.function(1))
        XCTAssertTrue(chrome(view.frame()).allSatisfy(\.isASCII), view.frame().dump)
        view.press(.escape)

        model.settings = ViewSettings(glyphs: .unicode)
        view.handle([.changedElsewhere])
        screen = view.frame()
        XCTAssertTrue(view.state.glyphs.isUnicode)
        guard let row = screen.position(of: "is Delivered")?.row else { return XCTFail(screen.dump) }
        XCTAssertTrue(screen.line(row).hasSuffix(" " + Glyphs.unicode.status(.delivered).text), screen.line(row))
    }

    /// A terminal that cannot draw Unicode (not a UTF-8 locale) stays ASCII whatever the
    /// setting says.
    func testGlyphsSettingUnicodeInAnASCIITerminalStaysASCII() {
        let model = FakeChatModel()
        model.contact("Sam")
        model.settings = ViewSettings(glyphs: .unicode)
        let view = makeView(model, glyphs: .ascii, open: "Sam")
        XCTAssertFalse(view.state.glyphs.isUnicode)
        view.handle([.changedElsewhere])
        XCTAssertFalse(view.state.glyphs.isUnicode)
    }
}

/// The help overlay all but as wide as the screen leaves no sliver of the conversation under
/// it beside its box (half a two-column status, a line's last letter).
final class OverlayMarginTests: XCTestCase {
    func testAWideOverlaysRowsAreBlankBesideItsBox() {
        let model = GlyphTests.everyStatus()
        let view = makeView(model, rows: 30, columns: 100, open: "Sam")
        let before = view.frame()
        XCTAssertTrue((0..<before.rows).contains { before[$0, 99].character != " " }, "statuses at the right edge: \(before.dump)")
        view.press(.function(1))
        let help = view.frame()
        let boxRows = (0..<help.rows).filter { help.line($0).contains(Glyphs.unicode.vertical + " ") }
        XCTAssertGreaterThan(boxRows.count, 5, help.dump)
        for row in boxRows {
            let line = Array(help.line(row))
            let right = line.lastIndex(of: Character(Glyphs.unicode.vertical)) ?? line.count - 1
            XCTAssertTrue(line[(right + 1)...].allSatisfy { $0 == " " }, "row \(row) beside the box: \(help.line(row))")
        }
    }
}
