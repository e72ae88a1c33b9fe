import XCTest
import RChatCore
@testable import RChatTUI

final class LiveTests: XCTestCase {
    /// Sending → Sent → Delivered → Read on screen while the user types: only the glyph's
    /// cell changes between frames, and the composer keeps every keystroke.
    func testStatusGlyphMovesWhileTyping() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.type("Hi Sam")
        view.press(.enter)
        XCTAssertEqual(model.sent.map(\.content), [.text("Hi Sam")])
        let id = model.items[model.id("Sam")]!.last!.message!.id
        var before = view.frame()
        let row = before.position(of: "Hi Sam")!.row
        XCTAssertEqual(before[row, 78].character, "…")
        view.type("still typ")
        before = view.frame()
        for (status, glyph) in [(MessageStatus.sent, "√ "), (.delivered, "√√"), (.read, "√√")] {
            model.setStatus("Sam", id, status)
            view.handle([.statusChanged(conversation: model.id("Sam"), id: id, status: status)])
            let after = view.frame()
            XCTAssertEqual(String(after[row, 78].character) + String(after[row, 79].character), glyph, status.rawValue)
            let runs = ScreenDiff.runs(from: before, to: after)
            XCTAssertEqual(runs.map(\.row), [row], "only the glyph changes: \(runs)")
            XCTAssertEqual(runs.first?.column, 78)
            XCTAssertEqual(after.line(23), "› still typ")
            XCTAssertEqual(after.cursor?.column, 2 + 9)
            before = after
        }
        view.type("ing")
        XCTAssertEqual(view.state.composer.text, "still typing")
    }

    func testNewMessageInOpenConversationAppearsAtTheBottom() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        let id = model.addMessage("Sam", .incoming, "A new one")
        view.handle([.newMessage(conversation: model.id("Sam"), id: id, preview: "A new one")])
        let screen = view.frame()
        XCTAssertEqual(screen.position(of: "A new one")?.row, 21, screen.dump)
        XCTAssertNil(screen.position(of: "New message"), "no banner for the conversation on screen")
    }

    func testRowAddedRefetchesMarkers() {
        let (model, ids) = samConversation()
        let view = makeView(model, open: "Sam")
        XCTAssertFalse(view.frame().contains("Resent"))
        // The engine resent "See you later" automatically and added a row saying so.
        if case .message(var m) = model.items[model.id("Sam")]![2] { m.resent = true; m.status = .sent; model.items[model.id("Sam")]![2] = .message(m) }
        model.addRow("Sam", "Sam's phone couldn't read 1 message, so rChat sent it again.", resending: [])
        view.handle([.rowAdded(conversation: model.id("Sam")), .statusChanged(conversation: model.id("Sam"), id: ids["later"]!, status: .sent)])
        let screen = view.frame()
        XCTAssertTrue(screen.contains("Resent"), screen.dump)
        XCTAssertTrue(screen.contains("couldn't read 1 message"), screen.dump)
        XCTAssertFalse(screen.contains("[r] Resend"), "an automatic resend offers nothing to press")
    }

    func testFailedSendKeepsTheText() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        model.failNextSend = ChatModelError("Keys don't match: nothing can be sent")
        view.type("important")
        view.press(.enter)
        let screen = view.frame()
        XCTAssertEqual(view.state.composer.text, "important")
        XCTAssertTrue(screen.line(22).contains("Keys don't match: nothing can be sent"), screen.dump)
    }
}
