import XCTest
import RChatCore
@testable import RChatTUI

/// Seed 001: "rChat asks for permission to show alerts the first time you open a
/// conversation, not when you first install it" — once; the store remembers the answer.
final class AlertPermissionTests: XCTestCase {
    func notAskedYet() -> FakeChatModel {
        let (model, _) = samConversation()
        model.alertPermissionAsked = false
        return model
    }

    func promptShown(_ view: ChatView) -> Bool {
        view.frame().contains(ChatView.alertPermissionQuestion)
    }

    func testNotAskedAtStartOnlyWhenAConversationOpens() {
        let model = notAskedYet()
        let view = makeView(model)
        XCTAssertFalse(promptShown(view), "not at start, on the list")
        XCTAssertEqual(view.state.focus, .list)
        view.press(.enter)   // opens Sam
        XCTAssertEqual(view.state.openConversation, model.id("Sam"))
        let screen = view.frame()
        XCTAssertTrue(screen.contains(ChatView.alertPermissionQuestion), screen.dump)
        XCTAssertTrue(screen.contains("rchat settings desktop-alerts on|off"), screen.dump)
        XCTAssertTrue(screen.contains("y: yes, n or Esc: no"), screen.dump)
        XCTAssertNil(screen.cursor, "no composer cursor while the question is up")
        XCTAssertTrue(model.alertPermissionAnswers.isEmpty)
    }

    func testYesAllowsAndIsNeverAskedAgain() {
        let model = notAskedYet()
        let view = makeView(model, open: "Sam")
        XCTAssertTrue(promptShown(view), "opening at start is a first open too")
        view.press(.character("y"))
        XCTAssertEqual(model.alertPermissionAnswers, [true])
        XCTAssertNil(view.state.overlay)
        XCTAssertTrue(view.frame().line(22).contains("Desktop alerts on."))
        XCTAssertTrue(view.state.composer.isEmpty, "the answer is not typed into the composer")

        // Other conversations, and Sam again: never asked again.
        view.press(.control("n"))
        XCTAssertEqual(view.state.openConversation, model.id("Alex"))
        XCTAssertFalse(promptShown(view))
        view.press(.control("p"))
        XCTAssertEqual(view.state.openConversation, model.id("Sam"))
        XCTAssertFalse(promptShown(view))
        XCTAssertEqual(model.alertPermissionAnswers, [true])
    }

    func testNoRefusesAndIsRecordedThroughTheModel() {
        let model = notAskedYet()
        let view = makeView(model, open: "Sam")
        view.press(.character("n"))
        XCTAssertEqual(model.alertPermissionAnswers, [false])
        XCTAssertTrue(model.alertPermissionAsked)
        XCTAssertNil(view.state.overlay)
        XCTAssertTrue(view.frame().line(22).contains("desktop-alerts on"), view.frame().dump)
        view.press(.control("n"))
        XCTAssertFalse(promptShown(view))
    }

    func testEscMeansNo() {
        let model = notAskedYet()
        let view = makeView(model, open: "Sam")
        view.press(.escape)
        XCTAssertEqual(model.alertPermissionAnswers, [false])
        XCTAssertNil(view.state.overlay)
        XCTAssertEqual(view.state.focus, .composer)
    }

    func testOtherKeysLeaveThePromptUpAndNeverReachTheComposer() {
        let model = notAskedYet()
        let view = makeView(model, open: "Sam")
        view.type("hello")
        view.press(.enter, .backspace, .up, .tab, .end, .pageUp, .character("?"), .character("q"))
        XCTAssertTrue(promptShown(view), "still asking")
        XCTAssertTrue(view.state.composer.isEmpty, "typed: \(view.state.composer.text)")
        XCTAssertTrue(model.sent.isEmpty)
        XCTAssertFalse(view.quitRequested, "q is not Quit while the question is up")
        XCTAssertTrue(model.alertPermissionAnswers.isEmpty)
        view.press(.character("Y"))
        XCTAssertEqual(model.alertPermissionAnswers, [true])
        view.type("hi")
        XCTAssertEqual(view.state.composer.text, "hi", "keys reach the composer once answered")
    }

    func testCtrlQQuitsWithoutAnswering() {
        let model = notAskedYet()
        let view = makeView(model, open: "Sam")
        view.press(.control("q"))
        XCTAssertTrue(view.quitRequested)
        XCTAssertTrue(model.alertPermissionAnswers.isEmpty, "unanswered: asked again next time")
    }

    func testNotShownWhenAlreadyAsked() {
        let (model, _) = samConversation()   // the fake has been asked already
        let view = makeView(model)
        view.press(.enter)
        XCTAssertEqual(view.state.openConversation, model.id("Sam"))
        XCTAssertFalse(promptShown(view))
        XCTAssertNil(view.state.overlay)
        view.type("hi")
        XCTAssertEqual(view.state.composer.text, "hi")
        XCTAssertTrue(model.alertPermissionAnswers.isEmpty)
    }

    func testAnsweredElsewhereWhileRunningIsNotAskedInThisRun() {
        // Asked once per run at most: the question is considered at the first open only.
        let model = notAskedYet()
        let view = makeView(model, open: "Sam")
        view.press(.character("n"))
        model.alertPermissionAsked = false   // e.g. the answer could not be stored
        view.press(.control("n"))
        XCTAssertFalse(promptShown(view), "not asked twice in one run")
    }

    func testAddingAContactIsAFirstOpenToo() {
        let model = FakeChatModel()
        model.alertPermissionAsked = false
        let view = makeView(model)
        view.type("/add rchat-1-Robin")
        view.press(.enter)
        XCTAssertEqual(view.state.openConversation, model.id("Robin"))
        XCTAssertTrue(promptShown(view))
        view.press(.character("y"))
        XCTAssertEqual(model.alertPermissionAnswers, [true])
    }

    func testNarrowAndAsciiScreensStillShowTheQuestion() {
        let model = notAskedYet()
        let view = makeView(model, rows: 12, columns: 40, glyphs: .ascii, open: "Sam")
        let screen = view.frame()
        XCTAssertTrue(screen.contains("Show desktop alerts"), screen.dump)
        XCTAssertTrue(screen.contains("(y/n)"), screen.dump)
    }
}

extension AlertPermissionTests {
    /// Issue 26: where there is no desktop (no session bus and no display)
    /// desktop alerts are never offered: no question at the first open, nothing stored.
    func testNeverAskedWithoutADesktop() {
        let model = notAskedYetWithoutADesktop()
        let view = makeView(model)
        view.press(.enter)
        XCTAssertEqual(view.state.openConversation, model.id("Sam"))
        XCTAssertFalse(promptShown(view), view.frame().dump)
        XCTAssertNil(view.state.overlay)
        view.type("hi")
        XCTAssertEqual(view.state.composer.text, "hi", "keys go to the composer")
        view.press(.control("n"))
        XCTAssertFalse(promptShown(view))
        XCTAssertTrue(model.alertPermissionAnswers.isEmpty)
        XCTAssertFalse(model.alertPermissionAsked, "still not asked: a later start on a desktop asks")
        let opened = makeView(notAskedYetWithoutADesktop(), open: "Sam")
        XCTAssertFalse(promptShown(opened), "nor when opened at start")
    }

    private func notAskedYetWithoutADesktop() -> FakeChatModel {
        let (model, _) = samConversation()
        model.alertPermissionAsked = false
        model.settings.desktop = .unavailable
        return model
    }
}
