import XCTest
import RChatCore
@testable import RChatTUI

/// The New line, "N new" when scrolled up, `u` over what arrived while the window was open,
/// Alt-1…9 and Alt-A, and a title that muted conversations leave alone.
final class UnreadTests: XCTestCase {
    private func statusLine(_ screen: Screen) -> String { screen.line(screen.rows - 2) }

    private func arrive(_ model: FakeChatModel, _ view: ChatView, _ contact: String, _ text: String) {
        let id = model.addMessage(contact, .incoming, text)
        view.handle([.newMessage(conversation: model.id(contact), id: id, preview: text)])
    }

    func testTheNewLineStandsAboveTheFirstUnreadUntilTheConversationIsLeft() {
        let (model, _) = samConversation()
        model.addMessage("Sam", .incoming, "first unread")
        model.addMessage("Sam", .outgoing, "my own, in between")
        model.addMessage("Sam", .incoming, "second unread")
        model.summaries[0].unread = 2
        let view = makeView(model, open: "Sam")
        var screen = view.frame()
        guard let new = screen.position(of: " New "), let first = screen.position(of: "first unread") else {
            return XCTFail(screen.dump)
        }
        XCTAssertEqual(new.row + 1, first.row, screen.dump)
        XCTAssertTrue(screen.line(new.row).contains("――― New ―――"), screen.line(new.row))
        XCTAssertTrue(screen[new.row, new.column + 1].style.bold)
        // Read now (the store says 0 unread): the line stays while the conversation is open.
        model.summaries[0].unread = 0
        view.handle([.conversationsChanged])
        XCTAssertNotNil(view.frame().position(of: " New "))
        view.press(.alt(.character("1")))   // Sam, already open: not left
        XCTAssertNotNil(view.frame().position(of: " New "))
        view.press(.control("n"), .control("p"))
        screen = view.frame()
        XCTAssertNil(screen.position(of: " New "), "left and opened again with nothing unread: no line")
    }

    func testTheNewLineFindsUnreadBeyondTheFirstPage() {
        let model = FakeChatModel()
        model.contact("Sam", unread: 60)
        model.fill("Sam", count: 200)   // even indexes are incoming: the 60th from the end is 80
        let view = makeView(model, open: "Sam")
        XCTAssertEqual(view.state.unread.newLine, 80)
        view.press(.alt(.character("u")))
        let screen = view.frame()
        XCTAssertEqual(screen.position(of: " New ")?.row, 1, screen.dump)
        XCTAssertEqual(screen.position(of: "message 80")?.row, 2, screen.dump)
    }

    /// Scrolled up, two messages arrive below: "2 new" says so, and `u` goes to the first
    /// of them (before, `u` knew only what was unread at open: here nothing).
    func testNNewWhenScrolledUpAndUGoesToWhatArrived() {
        let model = FakeChatModel()
        model.contact("Sam")
        model.fill("Sam", count: 100)
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        view.press(.pageUp)
        arrive(model, view, "Sam", "arrived one")
        arrive(model, view, "Sam", "arrived two")
        var screen = view.frame()
        XCTAssertTrue(statusLine(screen).contains("2 new v End"), statusLine(screen))
        XCTAssertFalse(screen.contains("arrived one"), "still scrolled up")
        view.press(.alt(.character("u")))
        screen = view.frame()
        XCTAssertEqual(view.state.selected, 100, "the first that arrived")
        XCTAssertNotNil(screen.position(of: "arrived one"), screen.dump)
        view.press(.end)
        screen = view.frame()
        XCTAssertFalse(statusLine(screen).contains("new"), statusLine(screen))
        XCTAssertEqual(view.state.unread.below, .none)
        // Following the newest, what arrives is on screen: nothing counts as below.
        arrive(model, view, "Sam", "arrived three")
        screen = view.frame()
        XCTAssertTrue(screen.contains("arrived three"))
        XCTAssertFalse(statusLine(screen).contains("new"), statusLine(screen))
        view.press(.escape)
        view.press(.alt(.character("u")))
        XCTAssertEqual(statusLine(view.frame()), " Online · No unread messages here.")
    }

    func testAltDigitsOpenTheNthConversationOfTheList() {
        let (model, _) = samConversation()
        model.contact("Kim")
        let view = makeView(model)
        view.press(.alt(.character("3")))
        XCTAssertEqual(view.frame().line(0), " rChat · Kim")
        XCTAssertEqual(view.state.focus, .composer)
        view.press(.alt(.character("1")))
        XCTAssertEqual(view.frame().line(0), " rChat · Sam")
        view.press(.alt(.character("9")))
        XCTAssertEqual(view.state.openConversation, model.id("Sam"))
        XCTAssertEqual(statusLine(view.frame()), " Online · The list has 3 conversations.")
        XCTAssertEqual(KeyMap.command(for: .alt(.character("9")), focus: .composer, composerEmpty: false), .conversationNumber(9))
        XCTAssertEqual(KeyMap.command(for: .character("3"), focus: .composer, composerEmpty: true), .edit(.insert("3")),
                       "a digit without Alt types")
    }

    func testAltAGoesToTheNextUnreadConversationMutedLast() {
        let (model, _) = samConversation()
        model.contact("Max", state: .muted, unread: 2)
        model.contact("Kim", unread: 1)
        model.contact("Bob", state: .blocked, unread: 4)
        let view = makeView(model, open: "Sam")
        view.press(.alt(.character("a")))
        XCTAssertEqual(view.state.openConversation, model.id("Kim"), "past the muted one")
        view.press(.alt(.character("a")))
        XCTAssertEqual(view.state.openConversation, model.id("Max"), "a muted one when no other has any")
        model.summaries = model.summaries.map { var s = $0; s.unread = 0; return s }
        view.handle([.conversationsChanged])
        view.press(.alt(.character("a")))
        XCTAssertEqual(view.state.openConversation, model.id("Max"))
        XCTAssertEqual(statusLine(view.frame()), " Online · No other conversation has unread messages.")
        XCTAssertTrue(KeyMap.help.contains { $0.keys == "Alt-A" }, "the help names the key")
    }

    func testMutedConversationsDoNotCountInTheTitle() {
        let (model, _) = samConversation()
        model.summaries[1].unread = 2
        model.contact("Max", state: .muted, unread: 5)
        let view = makeView(model, open: "Sam")
        let screen = view.frame()
        XCTAssertEqual(screen.title, "rChat (2)")
        XCTAssertTrue(statusLine(screen).contains("2 unread"), statusLine(screen))
        guard let max = screen.position(of: "Max") else { return XCTFail(screen.dump) }
        XCTAssertTrue(screen.line(max.row).hasSuffix("5") || screen.line(max.row).contains(" 5"),
                      "the list still shows the muted one's count: \(screen.line(max.row))")
    }
}
