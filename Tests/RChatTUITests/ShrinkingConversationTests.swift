import XCTest
import RChatCore
@testable import RChatTUI

/// Messages deleted while the conversation is open (their disappearing timer ran out): the
/// window drops them and keeps what the user looks at, the selection and the unread marks
/// on what remains.
final class ShrinkingConversationTests: XCTestCase {
    /// The conversation pane's rows (between the header and the status line).
    private func pane(_ screen: Screen) -> [String] { Array(screen.text[1..<(screen.rows - 2)]) }

    private func statusLine(_ screen: Screen) -> String { screen.line(screen.rows - 2) }

    private func long(_ count: Int, unread: Int = 0) -> FakeChatModel {
        let model = FakeChatModel()
        model.contact("Sam", unread: unread)
        model.fill("Sam", count: count)
        return model
    }

    /// The row where `text` stands as whole words (so "message 1" does not match "message 12").
    private func row(of text: String, in screen: Screen) -> Int? {
        screen.text.firstIndex { ($0 + " ").contains(" " + text + " ") }
    }

    /// Whether the item on `row` is drawn selected.
    private func selected(_ row: Int?, _ screen: Screen) -> Bool {
        row.map { screen.line($0).contains(Glyphs.unicode.selection) } ?? false
    }

    func testItemsRemovedAboveTheScreenDoNotMoveWhatIsOnScreen() {
        let model = long(300)
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        view.press(.pageUp, .pageUp)
        let before = view.frame()
        XCTAssertNotNil(view.state.anchor, "scrolled up")
        guard let window = view.state.window else { return XCTFail("no window") }
        // Some loaded above the screen, and the oldest, which are not loaded at all.
        XCTAssertGreaterThan(window.start, 30)
        model.expire("Sam", model.messageIDs("Sam", window.start..<(window.start + 5)) + model.messageIDs("Sam", 0..<30))
        view.handle(model.drainEvents())
        let after = view.frame()
        XCTAssertEqual(pane(after), pane(before), after.dump)
        XCTAssertEqual(view.state.window?.total, 265)
        view.press(.home)
        XCTAssertNotNil(row(of: "message 30", in: view.frame()), "the oldest remaining is first")
    }

    func testItemsRemovedBelowAreGoneAndWhatArrivedStillCounts() {
        let model = long(100)
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        view.press(.pageUp)
        let arrived: [MessageID] = ["arrived one", "arrived two"].map { text in
            let id = model.addMessage("Sam", .incoming, text)
            view.handle([.newMessage(conversation: model.id("Sam"), id: id, preview: text)])
            return id
        }
        let before = view.frame()
        XCTAssertTrue(statusLine(before).contains("2 new"), statusLine(before))
        // Below the screen, above what arrived: the newest ten of the old messages.
        model.expire("Sam", model.messageIDs("Sam", 90..<100))
        view.handle(model.drainEvents())
        var screen = view.frame()
        XCTAssertEqual(pane(screen), pane(before), screen.dump)
        XCTAssertTrue(statusLine(screen).contains("2 new"), statusLine(screen))
        // One of them gone too: one is still new, and `u` goes to it.
        model.expire("Sam", [arrived[0]])
        view.handle(model.drainEvents())
        screen = view.frame()
        XCTAssertTrue(statusLine(screen).contains("1 new"), statusLine(screen))
        view.press(.alt(.character("u")))
        screen = view.frame()
        XCTAssertEqual(view.state.selected, 90, "the one that remains of what arrived, at its new index")
        XCTAssertNotNil(screen.position(of: "arrived two"), screen.dump)
        view.press(.end)
        screen = view.frame()
        XCTAssertNil(row(of: "message 95", in: screen), screen.dump)
        XCTAssertNil(screen.position(of: "arrived one"), screen.dump)
        XCTAssertEqual(row(of: "message 89", in: screen).map { $0 + 1 }, row(of: "arrived two", in: screen), screen.dump)
    }

    func testTheSelectedItemStaysSelectedElseTheOneThatTookItsPlace() {
        let model = long(60)
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        view.press(.tab)
        XCTAssertEqual(view.state.focus, .conversation)
        view.press(.up, .up, .up, .up)   // the newest on screen, then three older
        XCTAssertEqual(view.state.selected, 56)
        var screen = view.frame()
        XCTAssertTrue(selected(row(of: "message 56", in: screen), screen), screen.dump)
        // Others go, above and below: the same message stays selected, under its new index.
        model.expire("Sam", model.messageIDs("Sam", [50, 51, 52, 58]))
        view.handle(model.drainEvents())
        XCTAssertEqual(view.state.selected, 53)
        screen = view.frame()
        XCTAssertTrue(selected(row(of: "message 56", in: screen), screen), screen.dump)
        // The selected one goes: the one that took its place is selected.
        model.expire("Sam", model.messageIDs("Sam", [53]))
        view.handle(model.drainEvents())
        screen = view.frame()
        XCTAssertNil(row(of: "message 56", in: screen), screen.dump)
        XCTAssertTrue(selected(row(of: "message 57", in: screen), screen), screen.dump)
        // The newest selected and gone: the one before it.
        view.press(.end)
        XCTAssertEqual(view.state.selected, 54)
        model.expire("Sam", model.messageIDs("Sam", [54]))
        view.handle(model.drainEvents())
        screen = view.frame()
        XCTAssertTrue(selected(row(of: "message 57", in: screen), screen), screen.dump)
        XCTAssertEqual(view.state.selected, 53)
    }

    func testAllOfThemGone() {
        let (model, ids) = samConversation()
        let view = makeView(model, open: "Sam")
        view.press(.tab, .up)
        XCTAssertNotNil(view.state.selected)
        model.expire("Sam", Array(ids.values))
        view.handle(model.drainEvents())
        var screen = view.frame()
        XCTAssertNil(view.state.selected)
        XCTAssertNil(view.state.anchor)
        XCTAssertEqual(view.state.window?.total, 0)
        for text in ["Hello! Are you there?", "Yes, here", "See you later"] {
            XCTAssertNil(screen.position(of: text), screen.dump)
        }
        // The conversation goes on.
        let id = model.addMessage("Sam", .incoming, "still here")
        view.handle([.newMessage(conversation: model.id("Sam"), id: id, preview: "still here")])
        screen = view.frame()
        XCTAssertNotNil(screen.position(of: "still here"), screen.dump)
    }

    /// Deep in a long history, far from both ends: deletions above (loaded and not), below
    /// and on screen. What remains on screen stays where it was, and finding the new place
    /// reads pages, not the history.
    func testScrolledUpInHistory() {
        let model = long(3_000)
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        for _ in 0..<60 { view.press(.pageUp) }
        var screen = view.frame()
        guard let window = view.state.window, view.state.anchor != nil else { return XCTFail("not scrolled") }
        XCTAssertFalse(window.reachesNewest)
        XCTAssertFalse(window.reachesOldest)
        // The top line on screen, which is deleted: the lines below it keep their rows.
        let topLine = pane(screen)[0].split(separator: " ")
        guard let word = topLine.firstIndex(of: "message"), let top = Int(topLine[word + 1]) else { return XCTFail(screen.dump) }
        XCTAssertNotNil(row(of: "message \(top)", in: screen), screen.dump)
        let before = pane(screen)
        let gone = model.messageIDs("Sam", 0..<700) + model.messageIDs("Sam", (window.start)..<(window.start + 3))
            + model.messageIDs("Sam", [top]) + model.messageIDs("Sam", 2_500..<3_000)
        let fetchedBefore = model.pageRequests.reduce(0) { $0 + $1.limit }
        model.expire("Sam", gone)
        view.handle(model.drainEvents())
        screen = view.frame()
        let fetched = model.pageRequests.reduce(0) { $0 + $1.limit } - fetchedBefore
        XCTAssertLessThan(fetched, 2_000, "pages near the window, not the history")
        XCTAssertEqual(Array(pane(screen).dropFirst()), Array(before.dropFirst()), screen.dump)
        XCTAssertNil(row(of: "message \(top)", in: screen))
        XCTAssertEqual(view.state.window?.total, 3_000 - 1_204)
        view.press(.end)
        screen = view.frame()
        XCTAssertNotNil(row(of: "message 2499", in: screen), screen.dump)
        XCTAssertNil(row(of: "message 2500", in: screen), screen.dump)
    }

    func testTheNewLineStaysAboveTheSameMessage() {
        let model = long(100, unread: 10)   // incoming are the even ones: the New line is above 80
        let view = makeView(model, open: "Sam")
        XCTAssertEqual(view.state.unread.newLine, 80)
        model.expire("Sam", model.messageIDs("Sam", 0..<40))
        view.handle(model.drainEvents())
        var screen = view.frame()
        XCTAssertEqual(view.state.unread.newLine, 40)
        XCTAssertEqual(screen.position(of: " New ").map { $0.row + 1 }, row(of: "message 80", in: screen), screen.dump)
        // The first unread itself goes: the line stands above the next one.
        model.expire("Sam", model.messageIDs("Sam", [40]))
        view.handle(model.drainEvents())
        screen = view.frame()
        XCTAssertEqual(screen.position(of: " New ").map { $0.row + 1 }, row(of: "message 81", in: screen), screen.dump)
    }

    /// Many places (scrolled by pages, a selection or none) and many ways of deleting
    /// (scattered, a block, the oldest, the newest, around the screen): each time the window
    /// holds what the model holds there, the selected message stays selected (else the one
    /// that took its place, else the newest), and the pane's bottom line stays on its message.
    func testEveryPlaceAndEveryPatternAgreeWithTheModel() {
        let patterns: [(String, (Int) -> Bool)] = [
            ("every third", { $0 % 3 == 0 }), ("the oldest half", { $0 < 200 }), ("the newest", { $0 >= 330 }),
            ("stripes", { ($0 / 7) % 2 == 0 }), ("a block", { (150..<300).contains($0) }), ("all but two", { $0 != 5 && $0 != 390 }),
        ]
        for pages in [0, 2, 7, 15] {
            for selecting in [false, true] {
                for (name, pattern) in patterns {
                    let place = "\(pages) pages up, \(selecting ? "selecting" : "no selection"), \(name)"
                    let model = long(400)
                    let view = makeView(model, open: "Sam")
                    _ = view.frame()
                    for _ in 0..<pages { view.press(.pageUp) }
                    if selecting { view.press(.tab, .up, .up) }
                    _ = view.frame()
                    let old = model.items[model.id("Sam")] ?? []
                    let selectedID = view.state.selected.map { old[$0].key }
                    let anchorID = view.state.anchor.map { old[$0.item].key }
                    let gone = Set(old.indices.filter(pattern).compactMap { old[$0].message?.id })
                    model.expire("Sam", Array(gone))
                    view.handle(model.drainEvents())
                    let now = model.items[model.id("Sam")] ?? []
                    guard let window = view.state.window else { return XCTFail(place) }
                    XCTAssertEqual(window.total, now.count, place)
                    XCTAssertEqual(window.items, Array(now[window.start..<window.end]), place)
                    if let selectedID, let was = old.firstIndex(where: { $0.key == selectedID }) {
                        let next = old[was...].first { !($0.message.map { gone.contains($0.id) } ?? false) }
                        let expected = next.map(\.key) ?? now.last?.key
                        XCTAssertEqual(view.state.selected.map { now[$0].key }, expected, place)
                    }
                    if let anchorID, let at = now.firstIndex(where: { $0.key == anchorID }) {
                        XCTAssertTrue(view.state.anchor?.item == at || (view.state.anchor == nil && at == now.count - 1), place)
                    }
                    let shown = view.frame().text.compactMap { line -> Int? in
                        let words = line.split(separator: " ")
                        return words.firstIndex(of: "message").flatMap { words.index(after: $0) < words.endIndex ? Int(words[$0 + 1]) : nil }
                    }
                    XCTAssertFalse(shown.isEmpty, place)
                    XCTAssertTrue(shown.allSatisfy { !pattern($0) }, "\(place): \(shown)")
                }
            }
        }
    }
}
