import XCTest
import RChatCore
@testable import RChatTUI

/// `/search WORDS`: the messages found in every conversation, newest first, in an overlay
/// with their conversation and time; Up/Down choose, Enter opens the conversation at the
/// message with it selected, Esc closes.
final class SearchViewTests: XCTestCase {
    func search(_ view: ChatView, _ words: String) {
        view.type("/search " + words)
        view.press(.enter)
    }

    func testResultsAreListedWithConversationTimeAndWhoNewestFirst() {
        let (model, _) = samConversation()
        model.addMessage("Sam", .incoming, "Lunch at noon?")                 // 1_700_000_240
        model.addMessage("Alex", .outgoing, "lunch tomorrow, Alex?", status: .sent)
        let view = makeView(model, open: "Sam")
        search(view, "LUNCH")
        XCTAssertEqual(model.searches.map(\.query.words), [["LUNCH"]])
        XCTAssertNil(model.searches.first?.conversation, "every conversation")
        guard case .search(let results)? = view.state.overlay?.kind else { return XCTFail("no results overlay") }
        XCTAssertEqual(results.hits.map(\.conversation), [model.id("Alex"), model.id("Sam")])
        XCTAssertEqual(view.state.composer.text, "", "the command left the composer")

        let screen = view.frame()
        XCTAssertTrue(screen.contains("Search: LUNCH — 2 found"), screen.dump)
        let alex = try! XCTUnwrap(screen.position(of: "Alex  2023-11-14 22:18  You: lunch tomorrow, Alex?"), screen.dump)
        let sam = try! XCTUnwrap(screen.position(of: "Sam   2023-11-14 22:17  Sam: Lunch at noon?"), screen.dump)
        XCTAssertEqual(sam.row, alex.row + 1, "newest first")
        XCTAssertTrue(screen[alex.row, alex.column].style.reverse, "the first is chosen")
        XCTAssertFalse(screen[sam.row, sam.column].style.reverse)
        XCTAssertTrue(screen.contains("Up/Down choose, Enter opens, Esc closes"), screen.dump)

        view.press(.down)
        let moved = view.frame()
        XCTAssertTrue(moved[sam.row, sam.column].style.reverse, moved.dump)
        XCTAssertFalse(moved[alex.row, alex.column].style.reverse)
        view.press(.down)   // stays on the last
        guard case .search(let after)? = view.state.overlay?.kind else { return XCTFail("closed") }
        XCTAssertEqual(after.chosen, 1)
    }

    func testEnterOpensTheConversationAtTheMessageSelected() {
        let model = FakeChatModel()
        model.contact("Sam")
        model.contact("Alex")
        model.fill("Sam", count: 300)
        let needle = model.addMessage("Sam", .incoming, "the needle is here")
        model.fill("Sam", count: 300)
        model.addMessage("Alex", .incoming, "another needle, newer")
        let view = makeView(model, open: "Alex")
        _ = view.frame()
        model.pageRequests = []
        search(view, "needle")
        view.press(.down, .enter)
        XCTAssertNil(view.state.overlay)
        XCTAssertEqual(view.state.openConversation, model.id("Sam"))
        XCTAssertEqual(view.state.focus, .conversation)
        XCTAssertEqual(view.state.selected, 300)
        let screen = view.frame()
        let row = try! XCTUnwrap(screen.position(of: "the needle is here"), screen.dump).row
        XCTAssertTrue(screen.line(row).contains("»") || (0..<screen.columns).contains { screen[row, $0].style.reverse },
                      "the message is shown selected:\n\(screen.dump)")
        XCTAssertTrue(model.pageRequests.allSatisfy { $0.limit <= view.pageSize * 2 }, "pages, never the whole history")
        // It was on screen: its Read report went as for any message drawn.
        XCTAssertTrue(model.shown.contains { $0.conversation == model.id("Sam") && $0.ids.contains(needle) })
        // `i` now acts on it: the selection is the message found.
        guard case .message(let m)? = view.state.window?.item(at: 300) else { return XCTFail("not loaded") }
        XCTAssertEqual(m.id, needle)
    }

    func testEscClosesAndAnyOtherKeyClosesAndDoesWhatItDoes() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        search(view, "hello")
        XCTAssertNotNil(view.state.overlay)
        view.press(.escape)
        XCTAssertNil(view.state.overlay)
        XCTAssertEqual(view.state.openConversation, model.id("Sam"))
        XCTAssertEqual(view.state.selected, nil, "nothing opened or selected")

        search(view, "hello")
        view.type("ok")
        XCTAssertNil(view.state.overlay)
        XCTAssertEqual(view.state.composer.text, "ok", "nothing typed is lost")
    }

    func testNothingFoundAndNothingToSearchFor() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        search(view, "zebra")
        var screen = view.frame()
        XCTAssertTrue(screen.contains("No message has zebra."), screen.dump)
        XCTAssertTrue(screen.contains("Esc closes"), screen.dump)
        view.press(.enter)
        XCTAssertNil(view.state.overlay)

        search(view, "* \"\" -")
        XCTAssertNil(view.state.overlay)
        XCTAssertEqual(model.searches.count, 1, "refused before asking the model")
        screen = view.frame()
        XCTAssertTrue(screen.contains("Usage: /search WORDS (nothing to search for"), screen.dump)

        model.failNextSearch = ChatModelError("The store cannot be read.")
        search(view, "hello")
        XCTAssertNil(view.state.overlay)
        XCTAssertTrue(view.frame().contains("The store cannot be read."))
    }

    func testTheChosenResultStaysOnScreenInALongList() {
        let (model, _) = samConversation()
        for n in 0..<60 { model.addMessage("Sam", .incoming, "lunch \(n)") }
        let view = makeView(model, rows: 24, columns: 80, open: "Sam")
        search(view, "lunch")
        for _ in 0..<40 { view.press(.down) }
        let screen = view.frame()
        let row = try! XCTUnwrap(screen.position(of: "Sam: lunch 19"), screen.dump).row
        XCTAssertTrue((0..<screen.columns).contains { screen[row, $0].style.reverse }, screen.dump)
        XCTAssertNil(screen.position(of: "Sam: lunch 59"), "scrolled past the first")
        view.press(.home)
        XCTAssertNotNil(view.frame().position(of: "Sam: lunch 59"))
    }

    func testAConversationDeletedMeanwhileIsNotOpened() {
        let (model, _) = samConversation()
        model.addMessage("Alex", .incoming, "lunch later")
        let view = makeView(model, open: "Sam")
        search(view, "lunch")
        try? model.delete(model.id("Alex"))   // by another process, while the results are up
        view.handle([.conversationsChanged])
        view.press(.enter)
        XCTAssertNil(view.state.overlay)
        XCTAssertEqual(view.state.openConversation, model.id("Sam"), "still the one that was open")
        XCTAssertTrue(view.frame().contains("That conversation no longer exists."))
    }

    func testHelpListsSearch() {
        let (model, _) = samConversation()
        let view = makeView(model, rows: 90, columns: 100, open: "Sam")
        view.press(.function(1))
        XCTAssertTrue(view.frame().contains("/search WORDS"), view.frame().dump)
    }
}
