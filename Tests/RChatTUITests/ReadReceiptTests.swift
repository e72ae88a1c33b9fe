import XCTest
import RChatCore
@testable import RChatTUI

final class ReadReceiptTests: XCTestCase {
    private func incomingIDs(_ model: FakeChatModel, _ contact: String) -> [Int: MessageID] {
        var out: [Int: MessageID] = [:]
        for (i, item) in model.items[model.id(contact)]!.enumerated() {
            if let m = item.message, m.direction == .incoming { out[i] = m.id }
        }
        return out
    }

    func testOnlyDrawnIncomingMessagesAreMarkedShown() {
        let model = FakeChatModel()
        model.contact("Sam")
        model.fill("Sam", count: 200)
        let view = makeView(model, open: "Sam")
        let screen = view.frame()
        let marked = Set(model.shown.flatMap(\.ids))
        let incoming = incomingIDs(model, "Sam")
        // Exactly the incoming messages whose text is on screen: none of the outgoing, none above.
        let expected = Set(incoming.filter { screen.contains("message \($0.key)") && !screen.contains("message \($0.key)0") }.values)
        XCTAssertEqual(marked, expected)
        XCTAssertEqual(marked.count, 10, screen.dump)   // 20 lines of messages, every other one incoming
        XCTAssertTrue(model.shown.allSatisfy { $0.conversation == model.id("Sam") })
        // Drawing the same again reports nothing new; scrolling up reports the newly drawn ones.
        _ = view.frame()
        XCTAssertEqual(model.shown.count, 1)
        view.press(.pageUp)
        _ = view.frame()
        XCTAssertEqual(model.shown.count, 2)
        XCTAssertTrue(Set(model.shown[1].ids).isDisjoint(with: marked))
    }

    func testNothingIsMarkedUnderAnOverlayOrInAnotherConversation() {
        let (model, _) = samConversation()
        let view = makeView(model)   // nothing open: the list has focus
        _ = view.frame()
        XCTAssertTrue(model.shown.isEmpty)
        view.press(.character("?"))
        view.press(.enter)           // closes help
        view.press(.enter)           // opens Sam
        XCTAssertEqual(view.state.openConversation, model.id("Sam"))
        view.press(.function(1))     // help covers the conversation before it is drawn
        _ = view.frame()
        XCTAssertTrue(model.shown.isEmpty, "covered by help: not shown")
        view.press(.escape)
        _ = view.frame()
        XCTAssertEqual(model.shown.map(\.conversation), [model.id("Sam")])
        let id = model.addMessage("Alex", .incoming, "elsewhere")
        view.handle([.newMessage(conversation: model.id("Alex"), id: id, preview: "")])
        _ = view.frame()
        XCTAssertFalse(model.shown.flatMap(\.ids).contains(id))
    }

    /// The terminal reports its window lost focus: what arrives meanwhile is drawn but not
    /// read; focus back, and what is still on screen is.
    func testNothingIsMarkedReadWhileTheTerminalHasLostFocus() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        let before = model.shown.count
        view.handle(.focusOut)
        let id = model.addMessage("Sam", .incoming, "while you were away")
        view.handle([.newMessage(conversation: model.id("Sam"), id: id, preview: "")])
        let screen = view.frame()
        XCTAssertTrue(screen.contains("while you were away"), screen.dump)
        _ = view.frame()
        XCTAssertEqual(model.shown.count, before, "nothing marked shown while focus is lost")
        view.handle(.focusIn)
        _ = view.frame()
        XCTAssertEqual(model.shown.last?.ids, [id])
    }

    /// A focus report is not a key press: the banner it would dismiss stays.
    func testAFocusReportLeavesTheBanner() {
        let (model, _) = samConversation()
        model.contact("Alex")
        let view = makeView(model, open: "Sam")
        let id = model.addMessage("Alex", .incoming, "hi")
        view.handle([.newMessage(conversation: model.id("Alex"), id: id, preview: "hi")])
        XCTAssertNotNil(view.state.banner)
        view.handle(.focusOut)
        view.handle(.focusIn)
        XCTAssertNotNil(view.state.banner)
    }
}
