import XCTest
import RChatCore
@testable import RChatTUI

final class NavigationTests: XCTestCase {
    func testListOpensConversations() {
        let (model, _) = samConversation()
        model.addMessage("Alex", .incoming, "from Alex")
        let view = makeView(model)
        XCTAssertEqual(view.state.focus, .list)
        var screen = view.frame()
        XCTAssertTrue(screen[1, 1].style.reverse, "the list cursor")
        view.press(.down, .enter)
        XCTAssertEqual(view.state.openConversation, model.id("Alex"))
        XCTAssertEqual(view.state.focus, .composer)
        screen = view.frame()
        XCTAssertTrue(screen.contains("from Alex"))
        XCTAssertEqual(screen.cursor?.row, 23)
        view.press(.control("n"))
        XCTAssertEqual(view.state.openConversation, model.id("Sam"))
        view.press(.control("p"))
        XCTAssertEqual(view.state.openConversation, model.id("Alex"))
    }

    func testTypingFromTheListGoesToTheComposer() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.press(.backTab)
        XCTAssertEqual(view.state.focus, .list)
        view.type("hey")
        XCTAssertEqual(view.state.focus, .composer)
        XCTAssertEqual(view.state.composer.text, "hey")
    }

    func testQuitKeys() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.type("q")   // in the composer, q is a letter
        XCTAssertFalse(view.quitRequested)
        view.press(.tab, .character("q"))
        XCTAssertFalse(view.quitRequested, "outside the composer too")
        XCTAssertEqual(view.state.composer.text, "qq")
        view.press(.control("c"))
        XCTAssertFalse(view.quitRequested, "Ctrl-C with a draft clears the line")
        XCTAssertEqual(view.state.composer.text, "")
        view.press(.control("c"))
        XCTAssertTrue(view.quitRequested)
        let other = makeView(model, open: "Sam")
        other.press(.control("q"))
        XCTAssertTrue(other.quitRequested)
    }

    func testJumpToFirstUnread() {
        let model = FakeChatModel()
        model.contact("Sam", unread: 3)
        model.fill("Sam", count: 300)
        for n in 0..<3 { model.addMessage("Sam", .incoming, "unread \(n) " + String(repeating: "words ", count: 30)) }
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        view.press(.alt(.character("u")))
        let screen = view.frame()
        XCTAssertEqual(view.state.selected, 300)
        // Everything from there fits, so the view stays at the newest with it selected.
        guard let row = screen.position(of: "unread 0")?.row else { return XCTFail(screen.dump) }
        XCTAssertEqual(screen[row, 21].character, "»")
        // With more after it, the first unread comes to the top.
        for n in 0..<5 { model.addMessage("Sam", .incoming, "later \(n) " + String(repeating: "words ", count: 30)) }
        model.summaries[0].unread = 8
        let more = makeView(model, open: "Sam")
        _ = more.frame()
        more.press(.tab, .up, .character("u"))
        // The New line above it comes to the top with it.
        XCTAssertEqual(more.frame().position(of: "unread 0")?.row, 2, more.frame().dump)
        XCTAssertEqual(more.frame().position(of: " New ")?.row, 1, more.frame().dump)
    }

    func testSelectionScrollsIntoView() {
        let model = FakeChatModel()
        model.contact("Sam")
        model.fill("Sam", count: 100)
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        view.press(.tab)
        XCTAssertNil(view.state.selected, "nothing to resend: Tab selects nothing")
        for _ in 0..<31 { view.press(.up) }   // the first Up selects the newest
        let screen = view.frame()
        XCTAssertEqual(view.state.selected, 69)
        let row = screen.position(of: "message 69")!.row
        XCTAssertEqual(row, 1, screen.dump)
        XCTAssertEqual(screen[row, 21].character, "»")
        for _ in 0..<40 { view.press(.down) }
        XCTAssertEqual(view.state.selected, 99)
        XCTAssertEqual(view.frame().position(of: "message 99")?.row, 21)
    }
}
