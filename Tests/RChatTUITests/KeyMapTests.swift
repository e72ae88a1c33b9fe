import XCTest
@testable import RChatTUI

final class KeyMapTests: XCTestCase {
    func testComposerKeys() {
        let c = { (k: Key) in KeyMap.command(for: k, focus: .composer, composerEmpty: false) }
        XCTAssertEqual(c(.character("r")), .edit(.insert("r")))
        XCTAssertEqual(c(.control("a")), .edit(.start))
        XCTAssertEqual(c(.control("e")), .edit(.end))
        XCTAssertEqual(c(.control("w")), .edit(.deleteWordBackward))
        XCTAssertEqual(c(.control("u")), .edit(.deleteToStart))
        XCTAssertEqual(c(.up), .edit(.lineUp), "a line up; from the first line, the history")
        XCTAssertEqual(c(.down), .edit(.lineDown))
        XCTAssertEqual(c(.control("r")), .searchHistory)
        XCTAssertEqual(c(.control("x")), .ctrlX)
        XCTAssertEqual(c(.enter), .submit)
        XCTAssertEqual(c(.character("?")), .edit(.insert("?")))
        XCTAssertEqual(KeyMap.command(for: .character("?"), focus: .composer, composerEmpty: true), .edit(.insert("?")),
                       "a message may start with ?: in the composer it always types")
        XCTAssertEqual(KeyMap.command(for: .function(1), focus: .composer, composerEmpty: false), .help)
        XCTAssertEqual(KeyMap.command(for: .character("?"), focus: .conversation, composerEmpty: false), .type("?"),
                       "outside the composer, ? goes on typing a draft that is waiting")
    }

    func testConversationKeys() {
        let c = { (k: Key) in KeyMap.command(for: k, focus: .conversation, composerEmpty: true, selection: true) }
        XCTAssertEqual(c(.character("r")), .resend)
        XCTAssertEqual(c(.character("i")), .details)
        XCTAssertEqual(c(.character("u")), .firstUnread)
        XCTAssertEqual(c(.character("?")), .help)
        XCTAssertEqual(c(.character("q")), .reply, "q answers the selected message: no letter quits")
        XCTAssertEqual(c(.character("j")), .type("j"), "no letter moves")
        XCTAssertEqual(c(.character("x")), .type("x"), "typing anywhere goes to the composer")
        XCTAssertEqual(c(.pageUp), .pageUp)
        XCTAssertEqual(c(.home), .oldest)
        XCTAssertEqual(c(.end), .newest)
    }

    /// The letters are commands only with a selection and nothing typed; Alt-letters always.
    func testCommandLettersNeedASelectionAndAnEmptyComposer() {
        for (focus, empty, selection) in [(Focus.conversation, true, false), (.conversation, false, true), (.list, true, false),
                                           (.list, true, true)] {
            for letter in "riuqjk" {
                XCTAssertEqual(KeyMap.command(for: .character(letter), focus: focus, composerEmpty: empty, selection: selection),
                               .type(letter), "\(letter) in \(focus), empty \(empty), selection \(selection)")
            }
        }
        for focus in Focus.allCases {
            XCTAssertEqual(KeyMap.command(for: .alt(.character("r")), focus: focus, composerEmpty: false), .resend)
            XCTAssertEqual(KeyMap.command(for: .alt(.character("i")), focus: focus, composerEmpty: false), .details)
            XCTAssertEqual(KeyMap.command(for: .alt(.character("u")), focus: focus, composerEmpty: false), .firstUnread)
            XCTAssertEqual(KeyMap.command(for: .alt(.character("?")), focus: focus, composerEmpty: false), .help)
            XCTAssertEqual(KeyMap.command(for: .alt(.character("q")), focus: focus, composerEmpty: false), .reply)
        }
    }

    func testRequestLettersAnswerARequestOnlyWithNothingTyped() {
        for focus in [Focus.composer, .conversation, .list] {
            let on = KeyMap.Context(focus: focus, composerEmpty: true, onRequest: true)
            XCTAssertEqual(KeyMap.command(for: .character("a"), in: on), .acceptRequest, "\(focus)")
            XCTAssertEqual(KeyMap.command(for: .character("d"), in: on), .declineRequest, "\(focus)")
            XCTAssertEqual(KeyMap.command(for: .character("b"), in: on), .blockRequest, "\(focus)")
            XCTAssertNotEqual(KeyMap.command(for: .character("x"), in: on), .acceptRequest)
            let typed = KeyMap.Context(focus: focus, composerEmpty: false, onRequest: true)
            XCTAssertNotEqual(KeyMap.command(for: .character("a"), in: typed), .acceptRequest, "\(focus): typing")
            let contact = KeyMap.Context(focus: focus, composerEmpty: true, onRequest: false)
            XCTAssertNotEqual(KeyMap.command(for: .character("a"), in: contact), .acceptRequest, "\(focus): not a request")
        }
        XCTAssertEqual(KeyMap.command(for: .character("/"), in: KeyMap.Context(focus: .composer, composerEmpty: true, onRequest: true)),
                       .edit(.insert("/")), "a /command still types")
    }

    func testQuitEverywhere() {
        for focus in Focus.allCases {
            XCTAssertEqual(KeyMap.command(for: .control("q"), focus: focus, composerEmpty: false), .quit)
            XCTAssertEqual(KeyMap.command(for: .control("c"), focus: focus, composerEmpty: true), .quit)
            XCTAssertEqual(KeyMap.command(for: .control("c"), focus: focus, composerEmpty: false), .edit(.clear),
                           "with something typed, Ctrl-C clears the line as in a shell")
        }
    }

    func testHelpNamesEveryKey() {
        let help = KeyMap.help.map(\.keys).joined(separator: " ")
        for name in ["Tab", "Up", "Down", "Enter", "Ctrl-N", "PgUp", "PgDn", "Home", "End", "u", "r", "i", "Esc",
                     "Ctrl-A", "Ctrl-E", "Ctrl-W", "Ctrl-U", "Left", "Right", "Backspace", "Delete", "?", "Ctrl-Q", "Ctrl-C",
                     "Alt-R", "Alt-I", "Alt-U", "Alt-?", "F1"] {
            XCTAssertTrue(help.contains(name), name)
        }
        let commands = KeyMap.slashHelp.map(\.command).joined(separator: " ")
        for name in ["/add", "/code", "/mute", "/unmute", "/block", "/unblock", "/delete", "/quit"] {
            XCTAssertTrue(commands.contains(name), name)
        }
    }

    /// Esc then a key, read together, arrive as Alt with the key: where Alt means nothing
    /// for it they act as the two keys (Esc closes the box, Ctrl-Q quits).
    func testEscAndAKeyReadTogetherActAsBothWhereAltMeansNothing() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.press(.function(1))
        XCTAssertNotNil(view.state.overlay)
        view.press(.alt(.control("q")))
        XCTAssertNil(view.state.overlay, "Esc closed the help")
        XCTAssertTrue(view.quitRequested, "and Ctrl-Q quit")
        let other = makeView(model, open: "Sam")
        other.press(.alt(.character("x")))
        XCTAssertEqual(other.state.composer.text, "x", "Esc, then x typed")
        other.press(.alt(.character("r")))
        XCTAssertEqual(other.state.composer.text, "x", "Alt-R means Resend: not typed")
    }
}
