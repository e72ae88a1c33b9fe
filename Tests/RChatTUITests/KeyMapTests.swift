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
        XCTAssertEqual(c(.up), .edit(.historyPrevious))
        XCTAssertEqual(c(.enter), .submit)
        XCTAssertEqual(c(.character("?")), .edit(.insert("?")))
        XCTAssertEqual(KeyMap.command(for: .character("?"), focus: .composer, composerEmpty: true), .edit(.insert("?")),
                       "a message may start with ?: in the composer it always types")
        XCTAssertEqual(KeyMap.command(for: .function(1), focus: .composer, composerEmpty: false), .help)
        XCTAssertEqual(KeyMap.command(for: .character("?"), focus: .conversation, composerEmpty: false), .type("?"),
                       "outside the composer, ? goes on typing a draft that is waiting")
    }

    func testConversationKeys() {
        let c = { (k: Key) in KeyMap.command(for: k, focus: .conversation, composerEmpty: true) }
        XCTAssertEqual(c(.character("r")), .resend)
        XCTAssertEqual(c(.character("i")), .details)
        XCTAssertEqual(c(.character("u")), .firstUnread)
        XCTAssertEqual(c(.character("?")), .help)
        XCTAssertEqual(c(.character("q")), .quit)
        XCTAssertEqual(c(.character("x")), .type("x"), "typing anywhere goes to the composer")
        XCTAssertEqual(c(.pageUp), .pageUp)
        XCTAssertEqual(c(.home), .oldest)
        XCTAssertEqual(c(.end), .newest)
    }

    func testQuitEverywhere() {
        for focus in Focus.allCases {
            XCTAssertEqual(KeyMap.command(for: .control("c"), focus: focus, composerEmpty: false), .quit)
        }
    }

    func testHelpNamesEveryKey() {
        let help = KeyMap.help.map(\.keys).joined(separator: " ")
        for name in ["Tab", "Up", "Down", "Enter", "Ctrl-N", "PgUp", "PgDn", "Home", "End", "u", "r", "i", "Esc",
                     "Ctrl-A", "Ctrl-E", "Ctrl-W", "Ctrl-U", "Left", "Right", "Backspace", "Delete", "?", "q"] {
            XCTAssertTrue(help.contains(name), name)
        }
        let commands = KeyMap.slashHelp.map(\.command).joined(separator: " ")
        for name in ["/add", "/code", "/mute", "/unmute", "/block", "/unblock", "/delete", "/quit"] {
            XCTAssertTrue(commands.contains(name), name)
        }
    }
}
