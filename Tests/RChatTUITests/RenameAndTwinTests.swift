import XCTest
import RChatCore
@testable import RChatTUI

/// The view keeps everything by conversation id: a rename (here or from `rchat rename`)
/// keeps the open window, its rows, where it is scrolled and the draft, and names that
/// differ only in case or width are separate conversations.
final class RenameAndTwinTests: XCTestCase {
    private func run(_ view: ChatView, _ line: String) {
        view.type(line)
        view.press(.enter)
    }

    /// Sam's long conversation, open and scrolled up, with a draft in the composer.
    private func openScrolledWithDraft() -> (FakeChatModel, ChatView, ConversationID) {
        let model = FakeChatModel()
        let sam = model.contact("Sam")
        model.contact("Alex")
        model.fill("Sam", count: 200)
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        view.press(.pageUp, .pageUp)
        return (model, view, sam)
    }

    /// The numbers of the `fill` messages on screen, top to bottom.
    private func messagesShown(_ screen: Screen) -> [Int] {
        screen.text.compactMap { line in
            guard let r = line.range(of: "message ") else { return nil }
            return Int(line[r.upperBound...].prefix { $0.isNumber })
        }
    }

    func testRenamedElsewhereTheWindowRowsScrollAndDraftStay() throws {
        let (model, view, sam) = openScrolledWithDraft()
        view.type("half a thought")
        let anchor = try XCTUnwrap(view.state.anchor, "scrolled up")
        let before = view.frame()
        let loaded = try XCTUnwrap(view.state.window)
        let requests = model.pageRequests.count

        model.setName(sam, "Samuel")   // `rchat rename Sam Samuel` in another terminal
        view.handle([.conversationsChanged])

        XCTAssertEqual(view.state.openConversation, sam, "the window stays open")
        XCTAssertEqual(view.state.window?.items, loaded.items, "the same rows, not fetched again")
        XCTAssertEqual(view.state.window?.start, loaded.start)
        XCTAssertEqual(model.pageRequests.count, requests, "nothing reloaded")
        XCTAssertEqual(view.state.anchor, anchor, "scrolled where it was")
        XCTAssertEqual(view.state.composer.text, "half a thought", "the draft stays")
        let after = view.frame()
        XCTAssertEqual(messagesShown(after), messagesShown(before), "the pane shows the same rows\n\(after.dump)")
        XCTAssertGreaterThan(messagesShown(after).count, 10, after.dump)
        XCTAssertTrue(after.line(0).contains("Samuel"), after.dump)
        XCTAssertTrue(after.text[1..<21].contains { $0.contains("Samuel") }, "the list says the new name\n\(after.dump)")
        // Sending still goes to the same conversation.
        view.press(.enter)
        XCTAssertEqual(model.sent.map(\.conversation), [sam])
        XCTAssertEqual(model.sent.map(\.content), [.text("half a thought")])
        // A message for it still lands in it (events carry the id, not the name).
        let id = model.addMessage(sam, .incoming, "still me")
        view.handle([.newMessage(conversation: sam, id: id, preview: "still me")])
        XCTAssertTrue(view.frame().contains("still me"))
        XCTAssertNil(view.state.banner, "no banner: it is the open conversation")
    }

    func testSlashRenameRenamesTheOpenConversationAndKeepsItsWindow() throws {
        let (model, view, sam) = openScrolledWithDraft()
        let anchor = try XCTUnwrap(view.state.anchor)
        let loaded = try XCTUnwrap(view.state.window)
        run(view, "/rename Sam Two")
        XCTAssertEqual(model.renamed.map(\.0), [sam])
        XCTAssertEqual(model.renamed.map(\.1), ["Sam Two"], "the rest of the line is the name, spaces and all")
        XCTAssertEqual(view.state.openConversation, sam)
        XCTAssertEqual(view.state.window?.items, loaded.items)
        XCTAssertEqual(view.state.anchor, anchor)
        XCTAssertEqual(view.state.focus, .composer)
        let screen = view.frame()
        XCTAssertTrue(screen.line(0).contains("Sam Two"), screen.dump)
        XCTAssertTrue(screen.line(22).contains("Renamed Sam to Sam Two."), screen.dump)
    }

    func testSlashRenameRefusedChangesNothing() {
        let (model, view, sam) = openScrolledWithDraft()
        model.failNextRename = ChatModelError("A contact named Alex already exists; choose another name.")
        run(view, "/rename Alex")
        XCTAssertEqual(view.state.openConversation, sam)
        XCTAssertEqual(model.summaries.first { $0.id == sam }?.name, "Sam")
        var screen = view.frame()
        XCTAssertTrue(screen.line(22).contains("A contact named Alex already exists"), screen.dump)
        run(view, "/rename")
        screen = view.frame()
        XCTAssertTrue(screen.line(22).contains("Usage: /rename NEW"), screen.dump)
        XCTAssertTrue(model.renamed.isEmpty)
        XCTAssertTrue(model.sent.isEmpty, "a command is never sent as a message")
    }

    /// "Bob", "bob" and "Ｂｏｂ" (full width): three conversations, each its own window;
    /// what arrives for one never lands in another.
    func testNamesDifferingOnlyInCaseOrWidthAreToldApart() throws {
        let model = FakeChatModel()
        let upper = model.contact("Bob"), lower = model.contact("bob"), wide = model.contact("Ｂｏｂ")
        model.addMessage(upper, .incoming, "from Bob")
        model.addMessage(lower, .incoming, "from bob")
        model.addMessage(wide, .incoming, "from wide Bob")
        let view = makeView(model)
        view.press(.down, .enter)
        XCTAssertEqual(view.state.openConversation, lower)
        XCTAssertTrue(view.frame().contains("from bob"))
        XCTAssertFalse(view.frame().contains("from Bob"))

        // Arrivals for the twins: banners, not rows in the open window.
        let a = model.addMessage(upper, .incoming, "second from Bob")
        view.handle([.newMessage(conversation: upper, id: a, preview: "second from Bob")])
        XCTAssertEqual(view.state.banner?.text, "Bob: New message")
        XCTAssertFalse(view.frame().contains("second from Bob"))
        let b = model.addMessage(lower, .incoming, "second from bob")
        view.handle([.newMessage(conversation: lower, id: b, preview: "second from bob")])
        XCTAssertTrue(view.frame().contains("second from bob"))
        let c = model.addMessage(wide, .outgoing, "to wide", status: .sending)
        view.handle([.statusChanged(conversation: wide, id: c, status: .delivered)])
        XCTAssertFalse(view.frame().contains("to wide"))

        // What is sent from this window goes to this conversation only.
        run(view, "hello bob")
        XCTAssertEqual(model.sent.map(\.conversation), [lower])
        // A typed name picks the same name first: "/mute Bob" is Bob, not bob.
        run(view, "/mute Bob")
        run(view, "/mute Ｂｏｂ")
        XCTAssertEqual(model.muted.map(\.0), [upper, wide])

        // Each opens its own window.
        var opened: [ConversationID] = []
        for _ in 0..<3 {
            view.press(.control("n"))
            opened.append(try XCTUnwrap(view.state.openConversation))
        }
        XCTAssertEqual(Set(opened), [upper, lower, wide])
        XCTAssertEqual(opened.last, lower)
        XCTAssertTrue(view.frame().contains("hello bob"), "bob's window has what was sent to bob")
    }
}
