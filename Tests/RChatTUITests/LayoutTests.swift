import XCTest
import RChatCore
@testable import RChatTUI

final class LayoutTests: XCTestCase {
    func testConversationLayout() {
        let (model, ids) = samConversation()
        model.contact("Kim", state: .keysDontMatch, unread: 2)
        model.contact("Lee", state: .request)
        model.contact("Max", state: .muted)
        model.contact("Bob", state: .blocked)
        let nd = model.addMessage("Sam", .outgoing, "Are you on your new phone?", status: .notDelivered)
        model.addMessage("Sam", .outgoing, "Sent again by itself", status: .sent, resent: true)
        model.addRow("Sam", "2 messages couldn't be read on Sam's phone.", resending: [nd, ids["later"]!])
        let screen = makeView(model, open: "Sam").frame()
        let text = screen.text
        XCTAssertEqual(text[0], " rChat · Sam", screen.dump)
        // The list: names, unread count, states in the product's words.
        XCTAssertTrue(text[1].hasPrefix("»Sam"), screen.dump)
        XCTAssertTrue(screen.contains("Kim               2"), screen.dump)
        for tag in ["Keys don't match", "request", "muted", "blocked"] { XCTAssertTrue(screen.contains(tag), tag) }
        // Messages: time, who, text; incoming shows the contact's name.
        XCTAssertTrue(screen.contains("22:14 Sam Hello! Are you there?"), screen.dump)
        XCTAssertTrue(screen.contains("22:15 You Yes, here"), screen.dump)
        XCTAssertTrue(screen.contains("2023-11-14"), "day separator")
        // Every outgoing message has its glyph at the right edge; the incoming one has none.
        let right = 78
        let glyphAt = { (needle: String) -> String in
            let row = screen.position(of: needle)!.row
            return (String(screen[row, right].character) + String(screen[row, right + 1].character)).trimmingCharacters(in: .whitespaces)
        }
        XCTAssertEqual(glyphAt("Yes, here"), "√√")
        XCTAssertEqual(glyphAt("See you later"), "√√")
        XCTAssertEqual(glyphAt("Are you on your new phone?"), "!")
        XCTAssertEqual(glyphAt("Sent again by itself"), "√")
        XCTAssertEqual(glyphAt("Hello! Are you there?"), "")
        // Read is the reversed one.
        XCTAssertTrue(screen[screen.position(of: "Yes, here")!.row, right].style.reverse)
        XCTAssertFalse(screen[screen.position(of: "See you later")!.row, right].style.reverse)
        // Not delivered says so, with its Resend; the quiet Resent marker; the row and its action.
        XCTAssertTrue(screen.contains("Not delivered · [r] Resend"), screen.dump)
        let resent = screen.position(of: "Resent")!
        XCTAssertEqual(resent.row, screen.position(of: "Sent again by itself")!.row + 1)
        XCTAssertTrue(screen[resent.row, resent.column].style.dim)
        let row = screen.position(of: "2 messages couldn't be read on Sam's phone.")!
        XCTAssertEqual(screen.line(row.row + 1).trimmingCharacters(in: .whitespaces).hasSuffix("[r] Resend"), true)
        // Status bar and composer.
        XCTAssertEqual(text[22], " Online · 2 unread · F1 help")
        XCTAssertEqual(text[23], "› Message Sam")
        XCTAssertEqual(screen.title, "rChat (2)")
        XCTAssertTrue(screen[22, 3].style.reverse)
    }

    /// A timer change (which this version cannot show) reads as a row: the row marker and
    /// one line saying so, never as something Sam wrote, never with a key.
    func testItemsThisVersionCannotShowAreRows() {
        let (model, _) = samConversation()
        model.items[model.id("Sam"), default: []].append(.message(MessageItem(id: MessageID(high: 9, low: 2), direction: .incoming,
                                                                   content: .control(.timerChanged(.oneHour)), status: nil,
                                                                   resent: false, at: 1_700_000_060)))
        let screen = makeView(model, open: "Sam").frame()
        let line = try! XCTUnwrap(screen.position(of: "They set disappearing messages to 1 hour."), screen.dump)
        XCTAssertEqual(screen[line.row, line.column - 2].character, "•", screen.dump)
        XCTAssertFalse(screen.line(line.row).contains(" Sam "), "not shown as a message Sam wrote: \(screen.dump)")
    }

    func testConnectionStatesAndTitle() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.handle([.connectionChanged(.offline(retryIn: 5))])
        XCTAssertTrue(view.frame().line(22).hasPrefix(" Offline, retrying in 5 s"))
        view.handle([.connectionChanged(.connecting)])
        XCTAssertTrue(view.frame().line(22).hasPrefix(" Connecting…"))
        XCTAssertEqual(view.frame().title, "rChat")
    }

    func testWideTextKeepsColumnsAligned() {
        let model = FakeChatModel()
        model.contact("Sam")
        for text in ["漢字のメッセージ", "🇫🇷🇯🇵 flags", "👨‍👩‍👧 family", "café crème"] {
            model.addMessage("Sam", .outgoing, text, status: .sent)
        }
        let screen = makeView(model, open: "Sam").frame()
        for needle in ["漢字", "🇫🇷", "👨‍👩‍👧", "café"] {
            guard let p = screen.position(of: needle) else { return XCTFail(needle + "\n" + screen.dump) }
            XCTAssertEqual(p.column, 21 + 11, needle)     // the text column
            XCTAssertEqual(screen[p.row, 78].character, "√", needle)  // the glyph column
        }
    }

    func testResizeRelaysOutFromTheModel() {
        let (model, _) = samConversation()
        model.addMessage("Sam", .incoming, String(repeating: "long words wrap ", count: 20))
        let view = makeView(model, open: "Sam")
        for (rows, columns) in [(24, 80), (10, 40), (30, 120), (15, 60), (50, 200), (12, 45), (24, 80)] {
            view.resize(rows: rows, columns: columns)
            let screen = view.frame()
            XCTAssertEqual(screen.rows, rows)
            XCTAssertEqual(screen.columns, columns)
            XCTAssertTrue(screen.contains("long words wrap"), "\(columns)x\(rows)\n" + screen.dump)
            if rows >= 24 { XCTAssertTrue(screen.contains("See you later"), screen.dump) }
            XCTAssertTrue(screen.line(rows - 1).hasPrefix("› "))
            XCTAssertTrue(screen.line(rows - 2).hasPrefix(" Online"))
            for row in 0..<rows { XCTAssertLessThanOrEqual(TextWidth.columns(of: screen.line(row)), columns) }
        }
    }

    func testTooSmallTerminalSaysSo() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        for (rows, columns) in [(9, 80), (24, 39), (5, 20), (1, 1), (0, 0), (3, 200)] {
            view.resize(rows: rows, columns: columns)
            let screen = view.frame()
            XCTAssertEqual(screen.rows, rows)
            if rows >= 3 && columns >= 20 {
                XCTAssertTrue(screen.text.joined(separator: " ").contains("Terminal too small"), screen.dump)
            }
            XCTAssertNil(screen.cursor)
        }
        XCTAssertTrue(model.shown.isEmpty, "nothing was on screen to be read")
        view.resize(rows: 10, columns: 40)
        XCTAssertTrue(view.frame().contains("See you later"))
    }

    func testEmptyStates() {
        let model = FakeChatModel()
        let view = makeView(model)
        let screen = view.frame()
        XCTAssertTrue(screen.text.joined(separator: " ").contains("/add CODE"), screen.dump)
        XCTAssertEqual(view.state.focus, .composer)
        model.contact("Sam")
        let open = makeView(model, open: "Sam").frame()
        XCTAssertTrue(open.contains("No messages yet"), open.dump)
    }

    func testNarrowTerminalHidesTheListUntilAskedFor() {
        let (model, _) = samConversation()
        let view = makeView(model, rows: 12, columns: 50, open: "Sam")
        XCTAssertFalse(view.frame().contains("Alex"))
        view.press(.backTab)   // composer → list
        XCTAssertEqual(view.state.focus, .list)
        XCTAssertTrue(view.frame().contains("Alex"))
    }
}
