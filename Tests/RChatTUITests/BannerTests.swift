import XCTest
import RChatCore
@testable import RChatTUI

/// Banners show in the status bar: the header names the open conversation at all times.
final class BannerTests: XCTestCase {
    /// The status bar's words after the connection ("Online · "), where a banner shows.
    private func banner(_ screen: Screen) -> String {
        let line = screen.line(screen.rows - 2)
        return line.hasPrefix(" Online · ") ? String(line.dropFirst(10)) : line
    }

    private func arrive(_ model: FakeChatModel, _ view: ChatView, _ contact: String, _ text: String) {
        let id = model.addMessage(contact, .incoming, text)
        view.handle([.newMessage(conversation: model.id(contact), id: id, preview: text)])
    }

    func testBannerForAnotherConversationNameOnly() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        arrive(model, view, "Alex", "secret plans")
        let screen = view.frame()
        XCTAssertEqual(banner(screen), "Alex: New message", screen.dump)
        XCTAssertEqual(screen.line(0), " rChat · Sam", "the header still names the open conversation")
        XCTAssertFalse(screen.contains("secret"), "the default shows the name only")
        let column = try! XCTUnwrap(screen.position(of: "Alex: New")).column
        XCTAssertTrue(screen[22, column].style.bold && screen[22, column].style.reverse)
    }

    func testNoBannerForTheConversationOnScreen() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        arrive(model, view, "Sam", "hi")
        XCTAssertEqual(view.frame().line(0), " rChat · Sam")
        XCTAssertNil(view.state.banner)
    }

    func testAlertSettingDecidesTheWords() {
        for (setting, expected) in [(AlertPolicy.Content.name, " Alex: New message"), (.nothing, " rChat: New message"),
                                    (.message, " Alex: line one line two")] {
            let (model, _) = samConversation()
            model.settings.alerts = setting
            let view = makeView(model, open: "Sam")
            arrive(model, view, "Alex", "line one\nline\ttwo")
            let screen = view.frame()
            XCTAssertEqual(banner(screen), String(expected.dropFirst()), "\(setting)")
            XCTAssertEqual(screen.line(0), " rChat · Sam")
        }
    }

    /// A reaction to one's own message in another conversation: a reaction's words, as the
    /// setting says ("Reacted 👍" only where a message would be shown).
    func testAReactionsBannerSaysItIsOne() {
        for (setting, expected) in [(AlertPolicy.Content.name, "Alex: New reaction"), (.nothing, "rChat: New reaction"),
                                    (.message, "Alex: Reacted 👍")] {
            let (model, _) = samConversation()
            model.settings.alerts = setting
            let view = makeView(model, open: "Sam")
            _ = model.contact("Alex")
            view.handle([.newMessage(conversation: model.id("Alex"), id: MessageID.random(), preview: "Reacted 👍", reaction: "👍")])
            XCTAssertEqual(view.state.banner?.text, expected, "\(setting)")
        }
    }

    func testRequestsMutedAndBlocked() {
        let (model, _) = samConversation()
        model.contact("Lee", state: .request)
        model.contact("Max", state: .muted)
        model.contact("Bob", state: .blocked)
        model.settings.alerts = .message
        let view = makeView(model, open: "Sam")
        arrive(model, view, "Lee", "who am I")
        XCTAssertEqual(banner(view.frame()), "rChat: New message request", "never a name or text for a request")
        view.press(.escape)
        arrive(model, view, "Max", "quiet")
        arrive(model, view, "Bob", "blocked")
        XCTAssertNil(view.state.banner)
        XCTAssertEqual(banner(view.frame()), "F1 help")
    }

    func testBellRingsForAnotherUnmutedConversationWhenOn() {
        let (model, _) = samConversation()
        model.contact("Max", state: .muted)
        model.contact("Bob", state: .blocked)
        model.settings.bell = true
        let view = makeView(model, open: "Sam")
        arrive(model, view, "Sam", "on screen")
        arrive(model, view, "Max", "muted")
        arrive(model, view, "Bob", "blocked")
        XCTAssertEqual(view.takeEffects(), [], "no bell for the open, a muted or a blocked conversation")
        arrive(model, view, "Alex", "elsewhere")
        let effects = view.takeEffects()
        XCTAssertEqual(effects, [.bell])
        XCTAssertEqual(effects.first?.sequence, "\u{07}")
        XCTAssertFalse(TerminalEffect.bell.needsOSC, "a bell even where OSC sequences would be printed")
        XCTAssertTrue(TerminalEffect.copy("x").needsOSC)
    }

    func testNoBellByDefault() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        arrive(model, view, "Alex", "elsewhere")
        XCTAssertNotNil(view.state.banner)
        XCTAssertEqual(view.takeEffects(), [])
    }

    func testBannerGoesOnAKeyOrAfterItsTime() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        arrive(model, view, "Alex", "x")
        XCTAssertEqual(banner(view.frame()), "Alex: New message")
        view.type("a")
        XCTAssertEqual(banner(view.frame()), "F1 help")
        XCTAssertEqual(view.state.composer.text, "a", "the key still types")
        arrive(model, view, "Alex", "y")
        XCTAssertNotNil(view.nextDeadline)
        model.clock += 6
        XCTAssertEqual(banner(view.frame()), "F1 help")
    }

    /// The same threshold as every alert: up to five show (one per contact, counted), more
    /// than five are one summary.
    func testSeveralAtOnceShowOncePerContactUpToFiveThenOneSummary() {
        let (model, _) = samConversation()
        model.contact("Kim")
        let view = makeView(model, open: "Sam")
        func burst(_ senders: [String]) {
            view.handle(senders.map { name in
                let id = model.addMessage(name, .incoming, "hi")
                return .newMessage(conversation: model.id(name), id: id, preview: "hi")
            })
        }
        burst(["Alex", "Kim", "Alex"])
        XCTAssertEqual(view.state.banner?.text, "Alex: 2 new messages · Kim: New message", "grouped by contact, counted")
        view.press(.escape)
        burst(["Alex", "Kim", "Alex", "Kim", "Alex"])
        XCTAssertEqual(view.state.banner?.text, "Alex: 3 new messages · Kim: 2 new messages")
        view.press(.escape)
        burst(["Alex", "Kim", "Alex", "Kim", "Alex", "Kim"])
        XCTAssertEqual(banner(view.frame()), "rChat: 6 new messages")
    }

    /// Issue 26: several messages from one contact while another conversation is on screen
    /// show "Alex: 3 new messages", not the same banner three times; the count starts again
    /// once the banner went (a key, or its time).
    func testMessagesArrivingOneByOneAreCountedWhileTheBannerIsUp() {
        let (model, _) = samConversation()
        model.settings.alerts = .message
        let view = makeView(model, open: "Sam")
        // The fake's clock moves a minute per message: here it moves only when the test says.
        func arriveNow(_ model: FakeChatModel, _ view: ChatView, _ contact: String, _ text: String) {
            let now = model.clock
            arrive(model, view, contact, text)
            model.clock = now
        }
        arriveNow(model, view, "Alex", "one")
        XCTAssertEqual(banner(view.frame()), "Alex: one")
        arriveNow(model, view, "Alex", "two")
        XCTAssertEqual(banner(view.frame()), "Alex: 2 new messages")
        model.clock += 4
        arriveNow(model, view, "Alex", "three")
        XCTAssertEqual(banner(view.frame()), "Alex: 3 new messages")
        model.clock += 4
        XCTAssertEqual(banner(view.frame()), "Alex: 3 new messages", "each arrival keeps it up its full time")
        arriveNow(model, view, "Sam", "on screen")
        XCTAssertEqual(banner(view.frame()), "Alex: 3 new messages", "the conversation on screen is not counted")
        model.contact("Lee", state: .request)
        arriveNow(model, view, "Lee", "who")
        XCTAssertEqual(banner(view.frame()), "Alex: 3 new messages · rChat: New message request")
        view.type("x")
        arriveNow(model, view, "Alex", "four")
        XCTAssertEqual(banner(view.frame()), "Alex: four", "a new banner after a key")
        model.clock += 6
        arriveNow(model, view, "Alex", "five")
        XCTAssertEqual(banner(view.frame()), "Alex: five", "and after its time ran out")
    }

    /// `rchat settings bell on` while the view runs: the engine says a command changed the
    /// store, and the view reads its settings again.
    func testSettingsChangedByACommandApplyAtOnce() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        arrive(model, view, "Alex", "before")
        XCTAssertEqual(view.takeEffects(), [])
        model.settings = ViewSettings(alerts: .nothing, bell: true, mouse: false)
        view.handle([.changedElsewhere])
        arrive(model, view, "Alex", "after")
        XCTAssertEqual(view.takeEffects(), [.bell])
        XCTAssertTrue(view.frame().contains("rChat: New message"), view.frame().dump)
    }
}
