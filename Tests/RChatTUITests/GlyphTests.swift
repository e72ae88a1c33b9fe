import XCTest
import RChatCore
@testable import RChatTUI

final class GlyphTests: XCTestCase {
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

    func testSuggestedUnicodeGlyphs() {
        let g = Glyphs.unicode
        XCTAssertEqual(g.status(.sending).text, "◷")
        XCTAssertEqual(g.status(.sent).text, "✓")
        XCTAssertEqual(g.status(.delivered).text, "ⓥ")
        XCTAssertEqual(g.status(.read).text, "ⓥ")
        XCTAssertTrue(g.status(.read).style.reverse && g.status(.read).style.bold)
        XCTAssertFalse(g.status(.delivered).style.reverse)
        XCTAssertEqual(g.status(.notConfirmed).text, "◷?")
        XCTAssertEqual(g.status(.notDelivered).text, "!")
        XCTAssertEqual(g.status(.failedToSend).text, "!")
        for s in MessageStatus.allCases { XCTAssertLessThanOrEqual(TextWidth.columns(of: g.status(s).text), 2) }
    }

    func testStatusesOnScreenInBothSets() {
        for glyphs in [Glyphs.unicode, Glyphs.ascii] {
            let model = FakeChatModel()
            model.contact("Sam")
            for s in MessageStatus.allCases { model.addMessage("Sam", .outgoing, "is \(s.rawValue)", status: s) }
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
}
