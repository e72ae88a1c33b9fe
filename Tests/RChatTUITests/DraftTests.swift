import XCTest
import RChatCore
@testable import RChatTUI

/// Each conversation keeps its own draft (with its cursor), in the view and in the store;
/// what Enter sends goes to the conversation the header names; quitting with something
/// typed asks first and says what happens to each draft.
final class DraftTests: XCTestCase {
    private func statusLine(_ screen: Screen) -> String { screen.line(screen.rows - 2) }
    private func composerLine(_ screen: Screen) -> String { screen.line(screen.rows - 1) }

    func testEachConversationKeepsItsDraftAndCursor() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.type("hello Sam")
        view.press(.left, .left, .left)
        view.press(.control("n"))
        var screen = view.frame()
        XCTAssertEqual(screen.line(0), " rChat · Alex")
        XCTAssertTrue(composerLine(screen).hasSuffix("Message Alex"), "Alex's composer is empty: \(composerLine(screen))")
        view.type("for Alex")
        view.press(.control("p"))
        screen = view.frame()
        XCTAssertEqual(screen.line(0), " rChat · Sam")
        XCTAssertEqual(view.state.composer.text, "hello Sam")
        XCTAssertEqual(view.state.composer.cursor, 6, "the cursor where it was left")
        XCTAssertTrue(composerLine(screen).hasSuffix("hello Sam"), composerLine(screen))
        view.press(.alt(.character("2")))   // Alex is second in the list
        XCTAssertEqual(view.state.composer.text, "for Alex")
        XCTAssertEqual(view.state.composer.cursor, 8)
    }

    /// Item 5's reproduction: text typed to Sam, Ctrl-N, Enter — nothing goes to Alex.
    func testEnterAfterSwitchingNeverSendsToTheConversationLeft() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.type("meant for Sam")
        view.press(.control("n"), .enter)
        XCTAssertEqual(view.frame().line(0), " rChat · Alex")
        XCTAssertTrue(model.sent.isEmpty, "Alex's composer was empty: nothing sent")
        view.press(.control("p"), .enter)
        XCTAssertEqual(model.sent.count, 1)
        XCTAssertEqual(model.sent.first?.conversation, model.id("Sam"))
        XCTAssertEqual(model.sent.first?.content, .text("meant for Sam"))
        XCTAssertNil(model.drafts[model.id("Sam")], "sent: no draft left in the store")
    }

    func testDraftsAreWrittenAMomentAfterTypingAtOnceWhenLeftAndGoneWhenSent() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        let sam = model.id("Sam")
        view.type("abc")
        _ = view.frame()
        XCTAssertTrue(model.draftWrites.isEmpty, "not a write per key")
        XCTAssertEqual(view.nextDeadline, model.clock + DraftBook.saveDelay, "the view wakes itself to write it")
        model.clock += 1
        view.type("d")
        _ = view.frame()
        XCTAssertTrue(model.draftWrites.isEmpty, "the first change sets the time")
        model.clock += 1
        _ = view.frame()
        XCTAssertEqual(model.draftWrites.map(\.draft?.text), ["abcd"])
        XCTAssertEqual(model.drafts[sam], Draft(text: "abcd", cursor: 4))
        XCTAssertNil(view.nextDeadline, "nothing left to write")
        view.type("e")
        view.press(.control("n"))
        XCTAssertEqual(model.drafts[sam]?.text, "abcde", "leaving writes at once")
        view.press(.control("n"))   // back to Sam; Alex had nothing typed: no write for Alex
        XCTAssertFalse(model.draftWrites.contains { $0.conversation == model.id("Alex") })
        let writes = model.draftWrites.count
        view.press(.enter)
        XCTAssertEqual(model.sent.last?.content, .text("abcde"))
        XCTAssertNil(model.drafts[sam], "sending removes it at once")
        XCTAssertEqual(model.draftWrites.count, writes + 1)
        model.clock += 5
        _ = view.frame()
        XCTAssertEqual(model.draftWrites.count, writes + 1, "and nothing more is written")
    }

    func testTheStoresDraftComesBackWhenTheViewStarts() {
        let (model, _) = samConversation()
        model.drafts[model.id("Sam")] = Draft(text: "from last time", cursor: 4)
        let view = makeView(model, open: "Sam")
        XCTAssertEqual(view.state.composer.text, "from last time")
        XCTAssertEqual(view.state.composer.cursor, 4)
        XCTAssertTrue(composerLine(view.frame()).hasSuffix("from last time"))
        XCTAssertTrue(model.draftWrites.isEmpty, "reading it writes nothing")
    }

    func testADraftThatCouldNotBeReadIsNeverWrittenOverWithNothing() {
        let (model, _) = samConversation()
        let sam = model.id("Sam")
        model.drafts[sam] = Draft(text: "kept safe", cursor: 9)
        model.failDraftReads = ChatModelError("Database is locked.")
        let view = makeView(model, open: "Sam")
        XCTAssertEqual(statusLine(view.frame()), " Online · The draft to Sam could not be read: Database is locked.")
        view.press(.control("n"), .control("p"), .control("q"))
        XCTAssertTrue(view.quitRequested)
        XCTAssertTrue(model.draftWrites.isEmpty)
        XCTAssertEqual(model.drafts[sam]?.text, "kept safe")
    }

    func testCtrlQWithTextAsksAndSaysTheDraftIsKept() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.type("half a thought")
        view.press(.control("q"))
        XCTAssertFalse(view.quitRequested)
        XCTAssertEqual(model.drafts[model.id("Sam")]?.text, "half a thought", "written before asking")
        let screen = view.frame()
        XCTAssertTrue(screen.contains("Quit?"), screen.dump)
        XCTAssertTrue(screen.contains("Your draft to Sam is kept"), screen.dump)
        XCTAssertTrue(screen.contains("y: quit, any other key: stay"), screen.dump)
        view.press(.character("n"))
        XCTAssertFalse(view.quitRequested)
        XCTAssertNil(view.state.overlay)
        XCTAssertEqual(view.state.composer.text, "half a thought", "the key answered the question, it typed nothing")
        view.press(.control("q"), .character("y"))
        XCTAssertTrue(view.quitRequested)
    }

    func testCtrlCClearsTheLineAndTheQuitAfterItKeepsNoStaleDraft() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.type("oops")
        model.clock += DraftBook.saveDelay
        _ = view.frame()
        XCTAssertEqual(model.drafts[model.id("Sam")]?.text, "oops")
        view.press(.control("c"))
        XCTAssertFalse(view.quitRequested)
        XCTAssertEqual(view.state.composer.text, "")
        view.press(.control("c"))
        XCTAssertTrue(view.quitRequested, "nothing typed, nothing at risk: no question")
        XCTAssertNil(model.drafts[model.id("Sam")], "the cleared line is not brought back next time")
    }

    /// A draft whose write failed is at risk: Ctrl-C on an empty composer and /quit ask,
    /// naming it; once it can be written they quit at once.
    func testAFailedSaveIsOneLineAndQuittingNamesTheDraftAtRisk() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        model.failDraftWrites = ChatModelError("Disk full.")
        view.type("to Sam")
        view.press(.control("n"))
        XCTAssertEqual(statusLine(view.frame()), " Online · The draft to Sam was not saved: Disk full.")
        view.press(.control("c"))
        XCTAssertFalse(view.quitRequested)
        let screen = view.frame()
        XCTAssertTrue(screen.contains("Your draft to Sam could not be saved"), screen.dump)
        XCTAssertTrue(screen.contains("it is lost if you quit"), screen.dump)
        view.press(.escape)
        XCTAssertFalse(view.quitRequested)
        view.type("/quit")
        view.press(.enter)
        XCTAssertFalse(view.quitRequested)
        XCTAssertTrue(view.frame().contains("Your draft to Sam could not be saved"))
        view.press(.escape)
        model.failDraftWrites = nil
        view.type("/quit")
        view.press(.enter)
        XCTAssertTrue(view.quitRequested)
        XCTAssertEqual(model.drafts[model.id("Sam")]?.text, "to Sam")
    }

    func testTypingWithNoConversationOpenIsNotKeptAndQuittingSaysSo() {
        let (model, _) = samConversation()
        let view = makeView(model)
        view.type("/ad")
        view.press(.control("q"))
        XCTAssertFalse(view.quitRequested)
        XCTAssertTrue(view.frame().contains("What you typed is not kept: no conversation is open."))
        view.press(.character("y"))
        XCTAssertTrue(view.quitRequested)
    }

    func testTextTypedWithNothingOpenGoesToTheConversationOpened() {
        let (model, _) = samConversation()
        model.drafts[model.id("Alex")] = Draft(text: "Alex's own", cursor: 3)
        let view = makeView(model)
        view.type("hello")
        view.press(.backTab, .enter)   // the list: open Sam
        XCTAssertEqual(view.frame().line(0), " rChat · Sam")
        XCTAssertEqual(view.state.composer.text, "hello", "not dropped by opening")
        view.press(.control("c"), .control("c"))
        XCTAssertTrue(view.quitRequested)
        model.lastOpenConversation = nil   // a start with nothing open (not Sam reopened)
        let other = makeView(model)
        other.type("and more")
        other.press(.alt(.character("2")))
        XCTAssertEqual(other.state.composer.text, "Alex's own and more", "after Alex's own draft, nothing lost")
        XCTAssertEqual(other.state.composer.cursor, 19)
    }

    func testTerminalGoingAwayWritesWhatIsTyped() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.type("mid-sentence")
        view.saveDrafts()   // what the terminal loop does after a signal or a hang-up
        XCTAssertEqual(model.drafts[model.id("Sam")], Draft(text: "mid-sentence", cursor: 12))
    }

    func testADeletedConversationsDraftIsForgotten() {
        let (model, _) = samConversation()
        let sam = model.id("Sam")
        let view = makeView(model, open: "Sam")
        model.failDraftWrites = ChatModelError("Disk full.")
        view.type("to Sam")
        view.press(.control("n"))   // Sam's draft is at risk now
        view.type("/delete Sam")
        view.press(.enter, .character("y"))
        XCTAssertEqual(model.deleted, [sam])
        view.press(.control("q"))
        XCTAssertTrue(view.quitRequested, "no question about a draft that went with its conversation")
    }
}
