import XCTest
import RChatCore
@testable import RChatTUI

/// Keys on a selected message (issue 31): `e` edits one's own text (the composer takes it,
/// Enter sends the new one, Esc lets it go), `d` twice deletes one's own for everyone, `+`
/// reacts 👍 and takes it back, `/react EMOJI` reacts with another.
final class MessageActionTests: XCTestCase {
    func testEditDeleteAndReactOnTheSelectedMessage() throws {
        let (model, ids) = samConversation()
        let later = try XCTUnwrap(ids["later"]), hello = try XCTUnwrap(ids["hello"])
        let view = makeView(model, open: "Sam")
        select(view, 2)                          // "See you later"
        view.press(.character("e"))
        XCTAssertEqual(view.state.focus, .composer)
        XCTAssertEqual(view.state.composer.text, "See you later", "the composer takes its text")
        let screen = view.frame()
        XCTAssertNotNil(screen.position(of: "Editing You: See you later"), screen.dump)
        XCTAssertNotNil(screen.position(of: "(Esc: not editing)"), screen.dump)
        view.press(.character("!"), .enter)
        XCTAssertEqual(model.acted.map(\.1), [.edit(later, text: "See you later!")])
        XCTAssertEqual(view.state.replyingTo, nil)
        XCTAssertEqual(view.state.notice?.text, "Edited.")
        // Esc while editing lets the edit go, and its text with it.
        select(view, 2)
        view.press(.character("e"), .escape)
        XCTAssertEqual(view.state.composer.text, "")
        XCTAssertNil(view.state.replyingTo)
        XCTAssertEqual(model.acted.count, 1)

        // Someone else's message: neither edited nor deleted; reacted to with + and /react.
        select(view, 0)
        view.press(.character("e"))
        XCTAssertEqual(view.state.notice?.text, "Only your own messages can be edited.")
        view.press(.character("d"))
        XCTAssertEqual(view.state.notice?.text, "Only your own messages can be deleted for everyone.")
        view.press(.character("+"))
        XCTAssertEqual(model.acted.last?.1, .react(hello, emoji: "👍"))
        if case .message(var m) = model.items[model.id("Sam")]![0] {
            m.reactions = [.init(from: "You", emoji: "👍", status: .sent)]
            model.items[model.id("Sam")]![0] = .message(m)
        }
        view.handle([.rowAdded(conversation: model.id("Sam"))])
        select(view, 0)
        view.press(.character("+"))
        XCTAssertEqual(model.acted.last?.1, .react(hello, emoji: nil), "+ again takes it back")
        select(view, 0)
        for c in "/react 🎉" { view.press(.character(c)) }
        view.press(.enter)
        XCTAssertEqual(model.acted.last?.1, .react(hello, emoji: "🎉"))

        // Delete for everyone asks first.
        select(view, 2)
        view.press(.character("d"))
        XCTAssertEqual(view.state.notice?.text, "Delete this message for everyone? Press d again to delete it.")
        XCTAssertFalse(model.acted.contains { $0.1 == .unsend(later) })
        view.press(.character("d"))
        XCTAssertEqual(model.acted.last?.1, .unsend(later))
        XCTAssertEqual(view.state.notice?.text, "Deleted for everyone.")
    }

    private func select(_ view: ChatView, _ index: Int) {
        view.state.focus = .conversation
        view.state.selected = index
        _ = view.frame()
    }
}
