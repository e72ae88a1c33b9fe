import XCTest
import RChatCore
@testable import RChatTUI

/// Names and texts from other people reach the screen as visible stand-ins: no cell ever
/// holds a character the terminal would act on (escape, bell, C1, direction override).
final class HostileTextScreenTests: XCTestCase {
    static let name = "Ev\u{202E}lI"
    static let text = "hi \u{1B}]0;pwned\u{07}\u{1B}[2J evil \u{9B}31m \u{2066}x\u{2069}\nsecond line"

    func testTheViewShowsStandInsNotControls() throws {
        let model = FakeChatModel()
        model.contact(Self.name)
        model.addMessage(Self.name, .incoming, Self.text)
        let view = makeView(model, rows: 24, columns: 100, open: Self.name)
        let screen = view.frame()
        XCTAssertTrue(screen.contains("hi \u{241B}]0;pwned\u{2407}\u{241B}[2J evil \u{FFFD}31m \u{FFFD}x\u{FFFD}"), screen.dump)
        XCTAssertTrue(screen.contains("second line"), "the message's line break is kept as one:\n\(screen.dump)")
        XCTAssertTrue(screen.contains("Ev\u{FFFD}lI"), "the name's override is shown, not obeyed:\n\(screen.dump)")
        for row in 0..<screen.rows {
            for column in 0..<screen.columns {
                for scalar in screen[row, column].character.unicodeScalars {
                    XCTAssertNil(TerminalText.standIn(for: scalar), "U+\(String(scalar.value, radix: 16)) at \(row),\(column)")
                }
            }
        }
        XCTAssertFalse(screen.title.contains("pwned"))
    }

    func testASCIIModeShowsQuestionMarks() {
        let model = FakeChatModel()
        model.contact("Sam")
        model.addMessage("Sam", .incoming, "a\u{1B}[2Jb\u{202E}c")
        let view = makeView(model, glyphs: .ascii, open: "Sam")
        let screen = view.frame()
        XCTAssertTrue(screen.contains("a?[2Jb?c"), screen.dump)
    }
}
