import XCTest
import RChatCore
@testable import RChatTUI

/// Message requests answered in the view (`a`, `d`, `b`, said in the request's header), and
/// `/safety` (issue 26, items 11 and 12).
final class RequestViewTests: XCTestCase {
    /// Sam, a contact, and two requests: Robin, a stranger, and "Sam (3f2a)", someone using
    /// Sam's name with other keys.
    private func requests() -> FakeChatModel {
        let model = FakeChatModel()
        model.contact("Sam")
        model.addMessage("Sam", .incoming, "from the Sam you know")
        model.contact("Robin", state: .request, unread: 1)
        model.addMessage("Robin", .incoming, "hi, I'm Robin")
        model.contact("Sam (3f2a)", state: .request, unread: 1)
        model.addMessage("Sam (3f2a)", .incoming, "it's me, on a new install")
        let i = model.summaries.firstIndex { $0.name == "Sam (3f2a)" }!
        model.summaries[i].namesake = model.id("Sam")
        return model
    }

    func testTheRequestsHeaderAndComposerSayWhatEachKeyDoes() {
        let model = requests()
        let view = makeView(model, columns: 160, open: "Robin")
        var screen = view.frame()
        let dot = Glyphs.unicode.separator
        XCTAssertTrue(screen.line(0).contains("Robin\(dot)request\(dot)a accept (pins the keys in their code)\(dot)d decline (deletes it)"
                                              + "\(dot)b block"), screen.dump)
        XCTAssertTrue(screen.contains("Message request: a accepts, d declines, b blocks (/safety: its safety number)"), screen.dump)
        let other = makeView(model, columns: 160, open: "Sam (3f2a)")
        screen = other.frame()
        XCTAssertTrue(screen.line(0).contains("a accept (pins the keys in their code, or gives them to Sam)\(dot)d decline"), screen.dump)
        // In the ASCII set, nothing outside ASCII.
        let ascii = makeView(model, columns: 160, glyphs: .ascii, open: "Robin").frame().line(0)
        XCTAssertTrue(ascii.contains("a accept (pins the keys in their code) | d decline (deletes it) | b block"), ascii)
        XCTAssertTrue(ascii.unicodeScalars.allSatisfy(\.isASCII), ascii)
        // Narrower: the short form, every key still there.
        let narrow = makeView(model, columns: 80, open: "Sam (3f2a)").frame().line(0)
        XCTAssertTrue(narrow.hasSuffix("request\(dot)a accept\(dot)d decline\(dot)b block"), narrow)
        // A contact's header says none of it.
        let sam = makeView(model, columns: 160, open: "Sam")
        XCTAssertFalse(sam.frame().line(0).contains("accept"), sam.frame().dump)
    }

    func testAAcceptsARequestAndSaysTheKeysWereNotCheckedInPerson() {
        let model = requests()
        let view = makeView(model, open: "Robin")
        let robin = model.id("Robin")
        view.press(.character("a"))
        XCTAssertEqual(model.acceptedRequests.map(\.request), [robin])
        XCTAssertEqual(model.acceptedRequests.map(\.replacing), [nil])
        XCTAssertEqual(view.state.summary(robin)?.state, .ok)
        XCTAssertEqual(view.state.openConversation, robin)
        XCTAssertEqual(view.state.notice?.text,
                       "Accepted Robin. The keys were not checked in person: /safety shows the number to compare with them.")
        XCTAssertEqual(view.state.composer.text, "", "the key answered; nothing was typed")
        // Now a contact like any other: the letters type.
        view.press(.character("a"))
        XCTAssertEqual(view.state.composer.text, "a")
        XCTAssertEqual(model.acceptedRequests.count, 1)
    }

    func testARequestUsingAKnownNameAsksWhetherToReplaceThatContactsKeys() {
        let model = requests()
        let view = makeView(model, columns: 100, open: "Sam (3f2a)")
        let request = model.id("Sam (3f2a)"), sam = model.id("Sam")
        view.press(.character("a"))
        XCTAssertEqual(view.state.overlay?.kind, .acceptRequest(request, namesake: sam))
        let screen = view.frame()
        XCTAssertTrue(screen.contains("r  replace: Sam's conversation goes on with these keys"), screen.dump)
        XCTAssertTrue(screen.contains("n  new: accept Sam (3f2a) as a contact of its own"), screen.dump)
        XCTAssertTrue(screen.contains("r: replace, n: new contact, any other key: not now"), screen.dump)
        // Any other key: nothing changes.
        view.press(.escape)
        XCTAssertNil(view.state.overlay)
        XCTAssertTrue(model.acceptedRequests.isEmpty)
        XCTAssertEqual(view.state.notice?.text, "Left Sam (3f2a) as it is.")
        // r: Sam's conversation takes the keys and the request's messages; it opens.
        view.press(.character("a"), .character("r"))
        XCTAssertEqual(model.acceptedRequests.map(\.request), [request])
        XCTAssertEqual(model.acceptedRequests.map(\.replacing), [sam])
        XCTAssertEqual(view.state.openConversation, sam)
        XCTAssertNil(view.state.summary(request))
        XCTAssertEqual(view.state.notice?.text, "Sam now has the keys of the request from Sam (3f2a). "
                       + "The keys were not checked in person: /safety shows the number to compare with them.")
        XCTAssertTrue(view.frame().contains("it's me, on a new install"), view.frame().dump)
    }

    func testNAcceptsTheNamesakeAsAContactOfItsOwn() {
        let model = requests()
        let view = makeView(model, open: "Sam (3f2a)")
        view.press(.character("a"), .character("n"))
        XCTAssertEqual(model.acceptedRequests.map(\.replacing), [nil])
        XCTAssertEqual(view.state.summary(model.id("Sam (3f2a)"))?.state, .ok)
        XCTAssertEqual(view.state.summary(model.id("Sam"))?.state, .ok)
    }

    func testDAsksThenDeclines() {
        let model = requests()
        let view = makeView(model, open: "Robin")
        let robin = model.id("Robin")
        view.press(.character("d"))
        XCTAssertEqual(view.state.overlay?.kind, .confirmDecline(robin))
        XCTAssertTrue(view.frame().contains("Decline Robin?"), view.frame().dump)
        view.press(.character("n"))
        XCTAssertTrue(model.declinedRequests.isEmpty)
        XCTAssertEqual(view.state.notice?.text, "Kept the message request from Robin.")
        view.press(.character("d"), .character("y"))
        XCTAssertEqual(model.declinedRequests, [robin])
        XCTAssertNil(view.state.openConversation, "the declined request is closed")
        XCTAssertFalse(view.frame().contains("hi, I'm Robin"))
        XCTAssertFalse(view.state.conversations.contains { $0.id == robin })
        XCTAssertEqual(view.state.notice?.text, "Declined the message request from Robin.")
    }

    func testBBlocksTheRequest() {
        let model = requests()
        let view = makeView(model, open: "Robin")
        view.press(.character("b"))
        XCTAssertEqual(model.blocked.map(\.0), [model.id("Robin")])
        XCTAssertEqual(model.blocked.map(\.1), [true])
        XCTAssertEqual(view.state.notice?.text, "Blocked Robin: nothing from them is kept; /unblock undoes it.")
    }

    func testOnTheListTheKeysAnswerTheRequestUnderTheCursor() {
        let model = requests()
        let view = makeView(model, open: "Sam")
        view.press(.tab, .tab)   // composer → conversation → list
        XCTAssertEqual(view.state.focus, .list)
        while view.state.conversations[view.state.listCursor].name != "Robin" { view.press(.down) }
        view.press(.character("a"))
        XCTAssertEqual(model.acceptedRequests.map(\.request), [model.id("Robin")])
        // On a contact's line the letter types, as before.
        let other = makeView(model, open: "Sam")
        other.press(.tab, .tab)
        while other.state.conversations[other.state.listCursor].name != "Sam" { other.press(.down) }
        other.press(.character("d"))
        XCTAssertEqual(other.state.composer.text, "d")
        XCTAssertNil(other.state.overlay)
    }

    func testWithSomethingTypedTheLettersType() {
        let model = requests()
        let view = makeView(model, open: "Robin")
        view.type("/safe")
        view.type("ab")
        XCTAssertEqual(view.state.composer.text, "/safeab")
        XCTAssertTrue(model.acceptedRequests.isEmpty)
        XCTAssertTrue(model.blocked.isEmpty)
    }

    func testSafetyShowsTheNumberAddPrinted() {
        let model = requests()
        let number = "12345 67890 13579 24680 11223 34455 66778 89900 01234 56789 98765 43210"
        model.safetyNumbers[model.id("Sam")] = number
        let view = makeView(model, columns: 100, open: "Sam")
        view.type("/safety")
        view.press(.enter)
        XCTAssertEqual(view.state.overlay?.kind, .safety)
        let screen = view.frame()
        XCTAssertTrue(screen.contains("safety number: 12345 67890 13579 24680 11223 34455"), screen.dump)
        XCTAssertTrue(screen.contains("               66778 89900 01234 56789 98765 43210"), screen.dump)
        XCTAssertTrue(screen.contains("Compare it with Sam in person or on a call"), screen.dump)
        view.press(.escape)
        XCTAssertNil(view.state.overlay)
        // Named, from another conversation; Tab completes the name.
        let other = makeView(model, columns: 100, open: "Robin")
        other.type("/safety Sa")
        other.press(.tab)
        XCTAssertEqual(other.state.composer.text.hasPrefix("/safety Sam"), true, other.state.composer.text)
        other.state.composer.restore("/safety Sam")
        other.press(.enter)
        XCTAssertTrue(other.frame().contains("66778 89900 01234 56789 98765 43210"), other.frame().dump)
        // Unknown: one line, no overlay.
        other.press(.escape)
        other.type("/safety Nobody")
        other.press(.enter)
        XCTAssertNil(other.state.overlay)
        XCTAssertEqual(other.state.notice?.isError, true)
    }

    func testHelpNamesTheRequestKeysAndSafety() {
        let model = requests()
        let view = makeView(model, rows: 200, columns: 120)
        view.press(.function(1))
        let screen = view.frame()
        XCTAssertTrue(screen.contains("a / d / b"), screen.dump)
        XCTAssertTrue(screen.contains("/safety [NAME]"), screen.dump)
    }
}
