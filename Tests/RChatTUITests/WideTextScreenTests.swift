import XCTest
import RChatCore
@testable import RChatTUI

/// The screen model with every kind of grapheme cluster: each is one unit in the composer
/// (typed code point by code point, as keys arrive), in the conversation and in the list.
final class WideTextScreenTests: XCTestCase {
    /// A draft typed scalar by scalar holds whole clusters; the cursor moves and deletes by
    /// cluster and its column is the clusters' width.
    func testComposerTakesClustersWhole() {
        var c = Composer()
        let typed = "漢👨‍👩‍👧e\u{301}1️⃣🇫🇷z\u{301}\u{302}\u{303}\u{304}\u{305}\u{306}"
        for scalar in typed.unicodeScalars { c.apply(.insert(Character(scalar))) }
        XCTAssertEqual(c.text, typed)
        XCTAssertEqual(c.characters.count, 6, "one position per cluster")
        XCTAssertEqual(c.cursorColumn, 2 + 6 + 1 + 1 + 2 + 1)
        c.apply(.left)
        XCTAssertEqual(c.cursorColumn, 12, "over the whole Zalgo cluster")
        c.apply(.backspace)
        XCTAssertEqual(c.text, "漢👨‍👩‍👧e\u{301}1️⃣z\u{301}\u{302}\u{303}\u{304}\u{305}\u{306}", "the whole flag goes")
        c.apply(.start); c.apply(.right)
        XCTAssertEqual(c.cursorColumn, 2)
        c.apply(.delete)
        XCTAssertEqual(c.text, "漢e\u{301}1️⃣z\u{301}\u{302}\u{303}\u{304}\u{305}\u{306}", "the whole family goes")
    }

    /// A long wide draft scrolled sideways: the cursor is always on the first column of a
    /// cluster or just after the text, never inside one, and never past the edge.
    func testComposerCursorNeverLandsInsideACluster() throws {
        let (model, _) = samConversation()
        let view = makeView(model, rows: 12, columns: 40, open: "Sam")
        view.type("a")
        for n in 0..<30 {
            view.type(["漢", "👨‍👩‍👧", "e\u{301}", "क्षि", "b"][n % 5])
            let screen = view.frame()
            let (row, column) = try XCTUnwrap(screen.cursor)
            XCTAssertLessThan(column, 40)
            XCTAssertFalse(screen[row, column].isContinuation, "after \(n + 1): cursor inside a cluster\n\(screen.dump)")
        }
    }

    /// Outgoing messages with each sample: the status glyph stays in its column, the text
    /// reads back whole, and a name with wide clusters keeps the list's border in place.
    func testConversationColumnsStayWhateverTheText() throws {
        let model = FakeChatModel()
        let name = "山田👨‍👩‍👧❤️é"
        model.contact(name)
        // Each with its columns as the C library (and so ncurses and tmux) counts them.
        let widths: KeyValuePairs = ["漢字": 4, "❤️": 1, "👍🏽": 4, "👨‍👩‍👧": 6, "🇫🇷": 2, "🇫": 1, "1️⃣": 1,
                                     "z" + String(repeating: "\u{301}", count: 6): 1, "क्षि": 3, "\u{0E01}\u{0E33}": 2,
                                     "\u{1112}\u{1161}\u{11AB}": 2]
        let samples = widths.map(\.key)
        for s in samples { model.addMessage(name, .outgoing, "[\(s)]", status: .sent) }
        let view = makeView(model, rows: 24, columns: 80, open: name)
        let screen = view.frame()
        let layout = Layout(rows: 24, columns: 80, showList: true)
        for (s, width) in widths {
            // As cells hold it (a lone regional indicator is shown as �).
            let shown = String(s.map { TextWidth.displayed($0, asciiOnly: false).0 })
            let at = try XCTUnwrap(screen.position(of: "[\(shown)]"), "\(s)\n\(screen.dump)")
            XCTAssertTrue(screen[at.row, at.column + 1 + width].character == "]", "\(s) is \(width) columns\n\(screen.dump)")
            XCTAssertFalse(screen[at.row, 78].isContinuation, s)
            XCTAssertNotEqual(screen[at.row, 78].character, " ", "\(s): the status glyph at its column\n\(screen.dump)")
        }
        for row in layout.bodyTop..<(layout.bodyTop + layout.bodyHeight) {
            XCTAssertEqual(screen[row, layout.listWidth].character, "|", "row \(row)\n\(screen.dump)")
        }
        XCTAssertTrue(screen.contains(name), screen.dump)
    }
}
