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
        // A code pasted with spaces where a selection broke it is one code.
        run(view, "/add rchat-1-Ro bin")
        XCTAssertEqual(model.added, ["Robin", "Robin"])
        XCTAssertTrue(view.frame().line(22).contains("Added Robin."))
    }

    func testCodeIsOneBorderlessRunTheMouseCanCopy() {
        let model = FakeChatModel()
        let letters: [String] = ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J"]
        var code = "rchat-1-"
        for i in 0..<200 { code += letters[i * 7 % 10] + String(i % 10) }
        model.code = code
        let view = makeView(model, rows: 24, columns: 80)
        run(view, "/code")
        let screen = view.frame()
        guard let start = screen.position(of: "rchat-1-") else { return XCTFail(screen.dump) }
        XCTAssertEqual(start.column, 0, "from the left edge, no border before it")
        // Whole rows of the code, nothing between them: joined they are the code exactly.
        let rows = (code.count + 79) / 80
        let drawn = (0..<rows).map { screen.line(start.row + $0) }
        for row in drawn.dropLast() { XCTAssertEqual(row.count, 80) }
        var joined = drawn.joined()
        while joined.last == " " { joined.removeLast() }
        XCTAssertEqual(joined, code, screen.dump)
        XCTAssertFalse(drawn.joined().contains(Glyphs.unicode.vertical))
        // A screen wide enough: one row.
        let wide = makeView(model, rows: 24, columns: code.count + 10)
        run(wide, "/code")
        let one = wide.frame()
        guard let at = one.position(of: code) else { return XCTFail("the code is not on one row") }
        XCTAssertEqual(at.column, 0)
    }

    func testACodePastedAcrossRowsIsAddedWhole() {
        let model = FakeChatModel()
        let view = makeView(model)
        var paste = BracketedPaste()
        // "/add " typed, then the code pasted as a mouse selection across two rows, then Enter.
        view.type("/add ")
        for key in paste.fold([.escape] + "[200~rchat-1-Ro\nbin\u{1B}[201~".map { $0 == "\n" ? .enter : $0 == "\u{1B}" ? .escape : .character($0) }) {
            view.handle(key)
        }
        XCTAssertEqual(model.added, [], "the line break inside the paste did not submit")
        view.press(.enter)
        XCTAssertEqual(model.added, ["Robin"])
    }

    func testCodeIsCopiedWithOSC52() {
        let model = FakeChatModel()
        model.code = "rchat-1-Robin"
        let view = makeView(model)
        XCTAssertEqual(view.takeEffects(), [])
        run(view, "/code")
        let effects = view.takeEffects()
        XCTAssertEqual(effects, [.copy("rchat-1-Robin")])
        XCTAssertEqual(effects.first?.sequence, "\u{1B}]52;c;cmNoYXQtMS1Sb2Jpbg==\u{07}")
        XCTAssertEqual(view.takeEffects(), [], "taken once")
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
