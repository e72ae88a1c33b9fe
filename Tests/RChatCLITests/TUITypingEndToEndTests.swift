import Foundation
import XCTest

/// Typing is safe and Read means seen: real views in tmux, keystroke by keystroke.
extension TUIEndToEndTests {
    /// Words typed after Tab land in the composer: "quick question" does not quit, "just
    /// testing" keeps its "ju", "i think so" opens nothing and keeps its "i ".
    func testWordsTypedAfterTabAreSentWhole() throws {
        try warmedUpViews()
        for words in ["quick question", "just testing", "i think so"] {
            try screens.keys(session("alice"), "Tab")
            try screens.type(session("alice"), words)
            try screen("alice", "\(words) sent whole, and Delivered") { Self.glyph(of: words, in: $0) == Self.shown(.delivered) }
        }
        try screen("sam", "Alice listed") { $0.contains("Alice") }
        try screens.keys(session("sam"), "Enter")
        try screen("sam", "all three whole on Sam's screen") { s in
            ["quick question", "just testing", "i think so"].allSatisfy { Self.conversationLine($0, in: s) != nil }
        }
        let alice = try screens.capture(session("alice"))
        XCTAssertFalse(alice.contains("[exited"), alice)
        XCTAssertFalse(alice.contains("Message details"), alice)
    }

    /// Focus reporting: while the terminal says its window lost focus, a message drawn on
    /// the screen is not Read; when focus comes back it is.
    func testNothingIsReadWhileTheTerminalWindowHasLostFocus() throws {
        try world.makePair("alice", "sam")
        try openView("sam")
        try openView("alice")
        try screen("sam", "Alice listed") { $0.contains("Alice") && $0.contains("Online") }
        try screens.keys(session("sam"), "Enter")
        try screen("sam", "Alice's conversation open") { $0.contains("Message Alice") }
        try screens.keys(session("alice"), "Enter")
        try screens.type(session("alice"), "first, while Sam looks")
        try screen("alice", "Read at once: Sam's window has focus", escapes: true) { Self.glyphIsReversed("first, while Sam looks", in: $0) }

        // Sam's terminal window loses focus (the bytes a terminal sends: ESC [ O).
        try screens.tmux(["send-keys", "-t", session("sam"), "-H", "1b", "5b", "4f"])
        try screens.type(session("alice"), "second, while Sam is away")
        try screen("sam", "drawn on Sam's screen") { Self.conversationLine("second, while Sam is away", in: $0) != nil }
        try screen("alice", "Delivered") { Self.glyph(of: "second, while Sam is away", in: $0) == Self.shown(.delivered) }
        // A round of keys through Sam's view (help open, closed) after the message was drawn:
        // a Read would have been counted by now, and the unread badge would be gone.
        try screens.keys(session("sam"), "F1")
        try screen("sam", "help open") { $0.contains("Keys") && $0.contains("Ctrl-Q") }
        try screens.keys(session("sam"), "Escape")
        let away = try screen("sam", "help closed") { !$0.contains("Ctrl-Q") && $0.contains("second, while Sam is away") }
        XCTAssertTrue(away.contains("1 unread"), "not read while the window had no focus:\n\(away)")
        XCTAssertFalse(Self.glyphIsReversed("second, while Sam is away", in: try screens.capture(session("alice"), escapes: true)))

        // Focus back (ESC [ I): now it is read.
        try screens.tmux(["send-keys", "-t", session("sam"), "-H", "1b", "5b", "49"])
        try screen("alice", "Read once Sam's window has focus again", escapes: true) {
            Self.glyphIsReversed("second, while Sam is away", in: $0)
        }
        try screen("sam", "no unread left") { !$0.contains("unread") }
    }
}
