import XCTest
import RChatCore
@testable import RChatTUI

final class CommandTests: XCTestCase {
    private func run(_ view: ChatView, _ line: String) {
        view.type(line)
        view.press(.enter)
    }

    func testAddOpensTheNewContact() {
        let model = FakeChatModel()
        let view = makeView(model)
        run(view, "/add rchat-1-Robin")
        XCTAssertEqual(model.added, ["Robin"])
        XCTAssertEqual(view.state.openConversation, model.id("Robin"))
        XCTAssertTrue(view.frame().line(22).contains("Added Robin."))
        run(view, "/add nonsense")
        XCTAssertTrue(view.frame().line(22).contains("not an rChat contact code"))
        run(view, "/add")
        XCTAssertTrue(view.frame().line(22).contains("Usage: /add CODE"))
    }

    func testCodeShowsMyCode() {
        let model = FakeChatModel()
        model.code = "rchat-1-" + String(repeating: "A", count: 150)
        let view = makeView(model)
        run(view, "/code")
        let screen = view.frame()
        XCTAssertTrue(screen.contains("Your code"))
        XCTAssertTrue(screen.contains("rchat-1-AAAA"), screen.dump)
    }

    func testMuteBlockAndTheirOpposites() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        for line in ["/mute", "/unmute", "/block", "/unblock", "/mute Alex"] { run(view, line) }
        XCTAssertEqual(model.muted.map(\.0), [model.id("Sam"), model.id("Sam"), model.id("Alex")])
        XCTAssertEqual(model.muted.map(\.1), [true, false, true])
        XCTAssertEqual(model.blocked.map(\.1), [true, false])
        XCTAssertTrue(view.frame().line(22).contains("Muted Alex: no banners"))
        XCTAssertTrue(model.sent.isEmpty, "commands are never sent as messages")
    }

    func testDeleteAsksFirst() {
        let (model, _) = samConversation()
        let sam = model.id("Sam")
        let view = makeView(model, open: "Sam")
        run(view, "/delete")
        XCTAssertTrue(view.frame().contains("Delete Sam?"))
        view.press(.character("n"))
        XCTAssertTrue(model.deleted.isEmpty)
        run(view, "/delete")
        view.press(.character("y"))
        XCTAssertEqual(model.deleted, [sam])
        XCTAssertNil(view.state.openConversation)
        XCTAssertFalse(view.frame().text[1..<22].contains { $0.contains("Sam") })
    }

    func testQuitUnknownAndSlashEscape() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        run(view, "/nope")
        XCTAssertTrue(view.frame().line(22).contains("Unknown command /nope"))
        run(view, "//not a command")
        XCTAssertEqual(model.sent.map(\.content), [.text("/not a command")])
        XCTAssertFalse(view.quitRequested)
        run(view, "/quit")
        XCTAssertTrue(view.quitRequested)
    }

    func testHistoryThroughTheView() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        run(view, "first")
        run(view, "second")
        view.type("dr")
        view.press(.up)
        XCTAssertEqual(view.state.composer.text, "second")
        view.press(.up, .down, .down)
        XCTAssertEqual(view.state.composer.text, "dr")
        view.press(.control("a"), .character(">"), .control("e"), .character("!"))
        XCTAssertEqual(view.state.composer.text, ">dr!")
        view.press(.control("w"))
        XCTAssertEqual(view.state.composer.text, "")
    }
}
