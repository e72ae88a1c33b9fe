import XCTest
import RChatCore
@testable import RChatTUI

final class PagingTests: XCTestCase {
    private func big(_ count: Int = 100_000) -> FakeChatModel {
        let model = FakeChatModel()
        model.contact("Sam")
        model.fill("Sam", count: count)
        return model
    }

    func testOpeningAsksForOnePage() {
        let model = big()
        let view = makeView(model, open: "Sam")
        let screen = view.frame()
        XCTAssertTrue(screen.contains("message 99999"), screen.dump)
        let fetched = model.pageRequests.reduce(0) { $0 + $1.limit }
        XCTAssertLessThanOrEqual(fetched, 24 * 2, "one page of screen height × 2: \(model.pageRequests)")
        XCTAssertEqual(model.pageRequests.first?.before, nil)
    }

    func testFirstFrameIsFast() {
        let model = big()
        let start = Date()
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        let elapsed = Date().timeIntervalSince(start)
        print("first frame of 100,000 messages (debug build): \(Int(elapsed * 1000)) ms")
        XCTAssertLessThan(elapsed, 0.5)   // generous: debug build, shared machine
    }

    func testScrollingFetchesMorePagesButNeverTheHistory() {
        let model = big()
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        for _ in 0..<10 { view.press(.pageUp) }
        let screen = view.frame()
        // Ten pages of 22 lines up from the newest; one line per message and no separators.
        XCTAssertTrue(screen.contains("message 99779"), screen.dump)
        XCTAssertTrue(screen.line(22).contains("End: newest"))
        let fetched = model.pageRequests.reduce(0) { $0 + $1.limit }
        XCTAssertLessThan(fetched, 1_000)
        XCTAssertLessThanOrEqual(view.state.window!.items.count, 4 * 48, "memory stays bounded")
        // Pages are asked for by their distance from the newest item.
        XCTAssertTrue(model.pageRequests.dropFirst().allSatisfy { ($0.before ?? 0) > 0 })
    }

    func testHomeAndEndJump() {
        let model = big()
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        view.press(.home)
        var screen = view.frame()
        XCTAssertEqual(screen.position(of: "message 0 ")?.row ?? screen.position(of: "message 0")?.row, 2, screen.dump)
        XCTAssertTrue(screen.contains("2023-11-14"))
        view.press(.pageDown)
        screen = view.frame()
        XCTAssertTrue(screen.contains("message 25"), screen.dump)
        view.press(.end)
        screen = view.frame()
        XCTAssertEqual(screen.position(of: "message 99999")?.row, 21)
        XCTAssertLessThan(model.pageRequests.reduce(0) { $0 + $1.limit }, 1_000)
    }

    func testPageDownReturnsToFollowing() {
        let model = big(200)
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        view.press(.pageUp, .pageUp, .pageDown, .pageDown)
        XCTAssertNil(view.state.anchor)
        let id = model.addMessage("Sam", .incoming, "live one")
        view.handle([.newMessage(conversation: model.id("Sam"), id: id, preview: "")])
        XCTAssertEqual(view.frame().position(of: "live one")?.row, 21)
    }

    func testScrolledUpStaysPutWhenMessagesArrive() {
        let model = big(200)
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        view.press(.pageUp)
        let before = view.frame()
        let id = model.addMessage("Sam", .incoming, "live one")
        view.handle([.newMessage(conversation: model.id("Sam"), id: id, preview: "")])
        let after = view.frame()
        XCTAssertEqual(Array(after.text[1..<21]), Array(before.text[1..<21]))
    }

    func testPageUpStopsAtTheOldest() {
        let model = big(30)
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        for _ in 0..<5 { view.press(.pageUp) }
        let screen = view.frame()
        XCTAssertTrue(screen.line(1).contains("2023-11-14"), screen.dump)
        XCTAssertTrue(screen.line(2).hasSuffix("message 0"), screen.dump)
        XCTAssertEqual(model.pageRequests.count, 1, "30 items fit in the first page")
    }
}
