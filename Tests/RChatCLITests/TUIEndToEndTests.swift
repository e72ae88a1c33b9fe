import Foundation
import XCTest
import RChatCore
import RChatStore
import RChatTUI
#if canImport(Glibc)
import Glibc
#endif

/// End to end: real `rchat` full-screen views in tmux, talking through a real
/// `rchat-relay` process — what a user sees, keystroke by keystroke.
final class TUIEndToEndTests: XCTestCase {
    var world: EngineWorld!
    var screens: TmuxScreens!

    static let utf8 = ["LANG": "C.UTF-8", "TERM": "xterm-256color"]

    override func setUpWithError() throws {
        try XCTSkipIf(TmuxScreens.executable == nil, "tmux is not installed (make deps installs it)")
        world = try EngineWorld()
        try world.startRelay()
        screens = TmuxScreens(box: world.box)
    }

    override func tearDown() {
        screens?.closeAll()
        world?.shutDown()
        screens = nil
        world = nil
    }

    // MARK: helpers

    /// A session name unique to this test run.
    func session(_ person: String) -> String { "\(person)-\(screens.server)" }

    /// Opens `person`'s full-screen view (home and device directory in the sandbox).
    func openView(_ person: String, home: String? = nil, env: [String: String] = utf8,
                  columns: Int = 100, rows: Int = 30, desktopAlerts: String = "off", arguments: [String] = []) throws {
        let home = home ?? person
        // The desktop-alerts question is asked at the first open (its own tests are
        // screen-model tests); answered here so the keys below reach the composer.
        if FileManager.default.fileExists(atPath: world.box.path("\(home)-home/rchat.db")) {
            try world.expectSuccess(world.box.rchat(home, ["settings", "desktop-alerts", desktopAlerts]))
        }
        try screens.open(session(person), [Binaries.path("rchat"), "--home", world.box.path("\(home)-home"),
                                          "--device-dir", world.box.path("\(home)-device")] + arguments,
                         env: env, columns: columns, rows: rows)
    }

    /// Ends the background linger a quit view left on `person`'s home (a process this
    /// test started, through the view), by the PID it wrote, and waits until it is gone.
    func stopLinger(_ person: String) throws {
        let pidFile = world.box.path("\(person)-home/linger.pid")
        try world.eventually("\(person)'s linger started", timeout: 10) { FileManager.default.fileExists(atPath: pidFile) }
        guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
              let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return }
        kill(pid, SIGTERM)
        // It removes its pid file as it ends (its exit may leave a zombie nobody reaps here).
        try world.eventually("\(person)'s linger ended", timeout: 10) {
            !FileManager.default.fileExists(atPath: pidFile) || kill(pid, 0) != 0
        }
    }

    /// Alice and Sam paired, both views open, Alice's conversation with Sam open and a
    /// warm-up message from her Delivered: a session both ways.
    func warmedUpViews(samEnv: [String: String] = utf8, samDesktopAlerts: String = "off") throws {
        try world.makePair("alice", "sam")
        try openView("sam", env: samEnv, desktopAlerts: samDesktopAlerts)
        try openView("alice")
        try screen("alice", "online") { $0.contains("Online") }
        try screen("sam", "Alice listed, online") { $0.contains("Alice") && $0.contains("Online") }
        try screens.keys(session("alice"), "Enter")
        try screens.type(session("alice"), "warm-up")
        try screen("alice", "warm-up Delivered") { Self.glyph(of: "warm-up", in: $0) == Self.shown(.delivered) }
    }

    /// The view logs of everyone, for a failure message.
    func logs() -> String {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: world.box.root.path)) ?? []
        return files.filter { $0.hasSuffix("-home") }.sorted().map { home in
            "--- \(home)/view.log\n" + ((try? String(contentsOfFile: world.box.path("\(home)/view.log"), encoding: .utf8)) ?? "")
        }.joined(separator: "\n") + "\n" + world.diagnostics()
    }

    @discardableResult
    func screen(_ person: String, _ what: String, seconds: Double = 15, escapes: Bool = false,
                _ condition: (String) -> Bool) throws -> String {
        try screens.screenUntilDeadline(session(person), what, seconds: seconds, escapes: escapes, context: logs, condition)
    }

    /// A conversation line showing `text` (not the composer, which shows it while typing).
    static func conversationLine(_ text: String, in screen: String) -> String? {
        screen.screenLines.first { $0.contains(text) && !$0.hasPrefix("›") && !$0.hasPrefix("> ") }
    }

    /// A status as the view draws it in a UTF-8 terminal.
    static func shown(_ status: MessageStatus) -> String { Glyphs.unicode.status(status).text }

    /// The status glyph at the end of the line showing an outgoing message's text.
    static func glyph(of text: String, in screen: String) -> String? {
        guard let line = conversationLine(text, in: screen) else { return nil }
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard let space = trimmed.lastIndex(of: " ") else { return nil }
        return String(trimmed[trimmed.index(after: space)...])
    }

    /// Whether the glyph that ends the line showing `text` is drawn in reverse video (Read),
    /// read from a capture with escapes.
    static func glyphIsReversed(_ text: String, in escaped: String) -> Bool {
        guard let line = escaped.screenLines.first(where: { $0.contains(text) && !$0.contains("›") }) else { return false }
        var reverse = false
        var lastVisibleReverse = false
        var rest = Substring(line)
        while let c = rest.first {
            if c == "\u{1B}", rest.dropFirst().first == "[" {
                guard let end = rest.firstIndex(where: { $0.isLetter }) else { break }
                let params = rest[rest.index(rest.startIndex, offsetBy: 2)..<end]
                if rest[end] == "m" {
                    for p in params.split(separator: ";", omittingEmptySubsequences: false) {
                        if p.isEmpty || p == "0" || p == "27" { reverse = false }
                        if p == "7" { reverse = true }
                    }
                }
                rest = rest[rest.index(after: end)...]
                continue
            }
            if !c.isWhitespace { lastVisibleReverse = reverse }
            rest = rest.dropFirst()
        }
        return lastVisibleReverse
    }

    /// Glyphs seen only ever go up: Sending, Sent, Delivered.
    /// The conversation line marked selected (not the list's cursor on Sam), or "".
    static func selectedRow(_ screen: String) -> String {
        String(screen.split(separator: "\n").first { $0.contains(Glyphs.unicode.selection) && !$0.contains(Glyphs.unicode.selection + "Sam") } ?? "")
    }

    static func inStatusOrder(_ seen: [String]) -> Bool {
        let ranks = seen.map { [MessageStatus.sending, .sent, .delivered].map(Self.shown).firstIndex(of: $0) ?? -1 }
        return !ranks.contains(-1) && ranks == ranks.sorted() && Set(ranks).count == ranks.count
    }

    /// The glyphs a message showed, in the order seen, recorded while waiting for `last`.
    func watchGlyphs(_ person: String, _ text: String, until last: String, seen: inout [String],
                     seconds: Double = 15) throws {
        // Only a status glyph counts: a capture taken while the text is still being typed finds
        // it in the composer's line, which ends with the text itself.
        let glyphs = Set(MessageStatus.allCases.map { Self.shown($0) })
        try screen(person, "\"\(text)\" shows \(last) (seen so far: \(seen))", seconds: seconds) { s in
            if let g = Self.glyph(of: text, in: s), glyphs.contains(g), seen.last != g { seen.append(g) }
            return seen.last == last
        }
    }

    // MARK: scenarios

    /// Type and send; the sender's screen shows Sending, Sent, Delivered, and Read (Delivered's
    /// glyph reversed) once the receiver opens the conversation.
    func testStatusGlyphsChangeLiveOnTheSendersScreen() throws {
        try world.makePair("alice", "sam")
        try openView("alice")
        try screen("alice", "the list with Sam and the relay online") { $0.contains("Sam") && $0.contains("Online") }
        try screens.keys(session("alice"), "Enter")   // open Sam
        try screen("alice", "the composer addressed to Sam") { $0.contains("Message Sam") }

        // Sam has never been online: the first message waits, Sending.
        try screens.type(session("alice"), "hello sam")
        try screen("alice", "hello sam is Sending") { Self.glyph(of: "hello sam", in: $0) == Self.shown(.sending) }

        // Sam's view opens on the list: the message arrives (Delivered), not yet read.
        try openView("sam")
        var first: [String] = [Self.shown(.sending)]
        try watchGlyphs("alice", "hello sam", until: Self.shown(.delivered), seen: &first)
        XCTAssertFalse(Self.glyphIsReversed("hello sam", in: try screens.capture(session("alice"), escapes: true)),
                       "Delivered, not Read, while Sam has not opened the conversation")
        try screen("sam", "Alice listed with an unread message") { $0.contains("Alice") && $0.contains("1") }

        // Sam leaves; what Alice sends now waits at the relay: Sent.
        try screens.keys(session("sam"), "C-q")
        try screen("sam", "Sam's view quit cleanly") { $0.contains("[exited 0]") }
        try stopLinger("sam")
        var second: [String] = []
        try screens.type(session("alice"), "are you there?")
        try watchGlyphs("alice", "are you there?", until: Self.shown(.sent), seen: &second)

        // Sam comes back: Delivered. Sam opens the conversation: Read, live on Alice's screen.
        try openView("sam")
        try watchGlyphs("alice", "are you there?", until: Self.shown(.delivered), seen: &second)
        try screen("sam", "Alice listed") { $0.contains("Alice") }
        try screens.keys(session("sam"), "Enter")
        try screen("sam", "both messages on Sam's screen") { $0.contains("hello sam") && $0.contains("are you there?") }
        try screen("alice", "are you there? is Read (reversed)", escapes: true) { Self.glyphIsReversed("are you there?", in: $0) }
        try screen("alice", "hello sam is Read (reversed)", escapes: true) { Self.glyphIsReversed("hello sam", in: $0) }
        XCTAssertTrue(Self.inStatusOrder(first) && first.first == Self.shown(.sending) && first.last == Self.shown(.delivered), "hello sam went \(first)")
        XCTAssertTrue(Self.inStatusOrder(second) && second.contains(Self.shown(.sent)), "are you there? went \(second)")

        // The details say why: each step with its time. With nothing to resend, Tab selects
        // nothing (letters typed next go to the composer); Up selects the last row, and the
        // selection is moved to the message rather than assumed to be on it.
        try screens.keys(session("alice"), "Tab", "Up")
        let selectedRow = Self.selectedRow
        // The selection is drawn before the walk starts: a capture taken before it would see
        // none, and the Up pressed then would land past the message.
        try screen("alice", "a selection after Tab, Up") { !selectedRow($0).isEmpty }
        for _ in 0..<3 where !selectedRow(try screens.capture(session("alice"))).contains("are you there?") {
            let before = selectedRow(try screens.capture(session("alice")))
            try screens.keys(session("alice"), "Up")
            try screen("alice", "the selection moved up") { selectedRow($0) != before }
        }
        XCTAssertTrue(selectedRow(try screens.capture(session("alice"))).contains("are you there?"))
        try screens.keys(session("alice"), "i")
        // Waits for the whole box: a capture can catch it half drawn.
        let steps = ["Message details", "Status: Read", "Stored", "Relay acknowledged", "Delivered", "Read"]
        let details = try screen("alice", "the message details, each step") { screen in steps.allSatisfy { screen.contains($0) } }
        for step in steps { XCTAssertTrue(details.contains(step), "details show \(step):\n\(details)") }
        try screens.keys(session("alice"), "Escape")
        // Esc and a key read together are Alt with that key: the box closes first.
        try screen("alice", "the details closed") { !$0.contains("Message details") }
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "Alice's view quit cleanly") { $0.contains("[exited 0]") }
    }

    /// Sam moves to a new phone while a message waits for him: it cannot be read there, and
    /// Alice's screen says so with a Resend one keypress away; Sam's new device is named, and
    /// the Resend waits until Alice enters his new code.
    func testResendByKeypressAfterTheReceiverMovedToANewPhone() throws {
        try warmedUpViews()

        try screens.keys(session("sam"), "C-q")
        try screen("sam", "Sam's view quit cleanly") { $0.contains("[exited 0]") }
        // Quitting leaves rChat running about 30 s more (the linger); end it now, as if
        // that time had passed, so Sam is really away.
        try stopLinger("sam")
        try screens.type(session("alice"), "lost on the old phone")
        try screen("alice", "the message held at the relay: Sent") { Self.glyph(of: "lost on the old phone", in: $0) == Self.shown(.sent) }

        // Sam restores his account on a new phone: a new home and an empty device directory.
        let backup = world.box.path("sam.backup")
        let secret = ["RCHAT_PASSPHRASE": "correct horse"]
        try world.expectSuccess(world.box.rchat("sam", ["account", "export", backup], env: secret))
        try world.expectSuccess(world.box.rchat("sam2", ["init", "--import", backup], env: secret))
        try openView("sam2")

        let notDelivered = try screen("alice", "Not delivered with a Resend row") { s in
            Self.glyph(of: "lost on the old phone", in: s) == Self.shown(.notDelivered) && s.contains("couldn't be read on Sam's phone")
                && s.contains("[r] Resend")  // in the wait too: a capture can catch the screen half drawn
        }
        XCTAssertTrue(notDelivered.contains("[r] Resend"), notDelivered)

        // Tab selects the newest item that offers Resend (the row), whatever was selected
        // before: a selection left on "warm-up" does not capture the next Tab, r.
        try screens.keys(session("alice"), "Tab")
        try screen("alice", "the row selected") { $0.line(containing: "couldn't be read")?.contains(Glyphs.unicode.selection) ?? false }
        for _ in 0..<4 where !Self.selectedRow(try screens.capture(session("alice"))).contains("warm-up") {
            let before = Self.selectedRow(try screens.capture(session("alice")))
            try screens.keys(session("alice"), "Up")
            try screen("alice", "the selection moved up") { Self.selectedRow($0) != before }
        }
        XCTAssertTrue(Self.selectedRow(try screens.capture(session("alice"))).contains("warm-up"))
        try screens.keys(session("alice"), "Tab", "Tab", "Tab")
        try screen("alice", "the row selected again") { $0.line(containing: "couldn't be read")?.contains(Glyphs.unicode.selection) ?? false }
        try screens.keys(session("alice"), "r")
        // Seed 000, "Tap to resend": the keypress is the consent, so the message goes to the
        // new phone before its code is entered; the row keeps its text and offers nothing more.
        let resent = try screen("alice", "the resent message Delivered on the new phone, before any code") { s in
            Self.glyph(of: "lost on the old phone", in: s) == Self.shown(.delivered)
                && s.contains("Sam is using a new device. Enter their code again to verify it.") && !s.contains("[r] Resend")
        }
        XCTAssertTrue(resent.contains("couldn't be read on Sam's phone"), resent)
        try screen("sam2", "Alice listed on the new phone") { $0.contains("Alice") }
        try screens.keys(session("sam2"), "Enter")
        try screen("sam2", "the message on the new phone") { $0.contains("lost on the old phone") }
        // Entering the code again pins the new phone: the row asking for it goes.
        try world.expectSuccess(world.box.rchat("alice", ["add", try world.code("sam2")]))
        try screen("alice", "the new-device row gone once the code is entered") { !$0.contains("Sam is using a new device.") }
    }

    /// Resizing at any moment re-lays out the screen from the model; too small says so.
    func testResizeKeepsTheScreenSane() throws {
        try world.makePair("alice", "sam")
        world.stopRelay()
        let long = "a long message that has to wrap when the window gets narrow, word by word, without losing any of it"
        try world.send("alice", to: "Sam", long)
        try openView("alice")
        try screens.keys(session("alice"), "Enter")
        try screen("alice", "the message") { $0.contains("a long message") }

        try screens.resize(session("alice"), columns: 60, rows: 16)
        let narrow = try screen("alice", "laid out for 60×16") { s in
            let lines = s.screenLines.filter { !$0.isEmpty }
            return lines.count <= 16 && (lines.last?.hasPrefix("›") ?? false) && s.contains("losing any of it")
        }
        let lines = narrow.screenLines
        XCTAssertTrue(lines.allSatisfy { $0.count <= 60 }, narrow)
        XCTAssertTrue(lines.contains { $0.contains("Offline") || $0.contains("Connecting") }, "status bar kept:\n\(narrow)")

        try screens.resize(session("alice"), columns: 30, rows: 8)
        try screen("alice", "too small, said clearly") { $0.contains("too small") }

        try screens.resize(session("alice"), columns: 100, rows: 30)
        let back = try screen("alice", "back to 100×30") { s in
            s.contains("a long message that has to wrap") && (s.screenLines.last { !$0.isEmpty }?.hasPrefix("›") ?? false)
        }
        XCTAssertFalse(back.contains("too small"), back)
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "quit cleanly") { $0.contains("[exited 0]") }
    }

    /// A contact's escape sequences and direction overrides arrive through the relay and
    /// show as visible stand-ins: the screen is not cleared, the title not changed, the
    /// name not reversed.
    func testHostileTextShowsAsStandInsOnScreen() throws {
        _ = try world.hostileMessageWaitingForAlice()
        try openView("alice")
        try screen("alice", "Mallory listed") { $0.contains("Mallory") }
        try screens.keys(session("alice"), "Enter")
        let shown = try screen("alice", "the hostile message, with stand-ins") { s in
            s.contains("hi \u{241B}]0;pwned\u{2407}\u{241B}[2J\u{241B}[31mred \u{FFFD}31m \u{FFFD}evil\u{FFFD}") && s.contains("second line")
        }
        XCTAssertEqual(terminalControls(in: shown, allowing: ["\n"]), [], shown)
        XCTAssertTrue(shown.contains("warm-up"), "the screen was not cleared:\n\(shown)")
        let title = try screens.tmux(["display-message", "-p", "-t", session("alice"), "#{pane_title}"])
        XCTAssertFalse(title.stdout.contains("pwned"), "the terminal title was set by a message: \(title.stdout)")
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "quit cleanly") { $0.contains("[exited 0]") }
    }

    /// A locale that is not UTF-8 gets the ASCII glyph set, not garbage.
    func testNonUTF8LocaleShowsASCIIGlyphs() throws {
        try world.makePair("alice", "sam")
        world.stopRelay()
        try world.send("alice", to: "Sam", "waiting for a relay")
        try world.expectSuccess(world.box.rchat("alice", ["block", "Sam"]))
        try world.send("alice", to: "Sam", "to a blocked contact")
        try world.expectSuccess(world.box.rchat("alice", ["unblock", "Sam"]))
        try openView("alice", env: ["LANG": "C", "TERM": "xterm-256color"])
        try screens.keys(session("alice"), "Enter")
        let shown = try screen("alice", "the conversation in ASCII, with the composer") { s in
            s.contains("waiting for a relay") && s.contains("to a blocked contact") && s.screenLines.contains { $0.hasPrefix("> ") }
        }
        XCTAssertEqual(Self.glyph(of: "waiting for a relay", in: shown), "..", shown)
        XCTAssertEqual(Self.glyph(of: "to a blocked contact", in: shown), "x!", shown)
        XCTAssertTrue(shown.unicodeScalars.allSatisfy { $0.isASCII }, "only ASCII on screen:\n\(shown)")
        XCTAssertTrue(shown.screenLines.contains { $0.hasPrefix("> ") }, shown)
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "quit cleanly") { $0.contains("[exited 0]") }
    }

    /// `rchat settings glyphs ascii` beside a view in a UTF-8 terminal: its statuses, border
    /// and marks turn ASCII at once, and back with `glyphs unicode`; message text still
    /// shows as written.
    func testGlyphsSettingASCIIInAUTF8Terminal() throws {
        try world.makePair("alice", "sam")
        world.stopRelay()
        try world.send("alice", to: "Sam", "Grüße aus Köln")
        try world.send("alice", to: "Sam", "waiting for a relay")
        try openView("alice")
        try screens.keys(session("alice"), "Enter")
        let unicode = Glyphs.unicode.status(.sending).text
        try screen("alice", "Sending drawn as \(unicode)") { s in
            s.contains("Grüße aus Köln") && Self.glyph(of: "waiting for a relay", in: s) == unicode
        }
        try world.expectSuccess(world.box.rchat("alice", ["settings", "glyphs", "ascii"]))
        let shown = try screen("alice", "the view's own glyphs in ASCII") { s in
            Self.glyph(of: "waiting for a relay", in: s) == Glyphs.ascii.status(.sending).text
        }
        XCTAssertTrue(shown.contains("Grüße aus Köln"), shown)
        let chrome = shown.replacingOccurrences(of: "Grüße aus Köln", with: "")
        XCTAssertTrue(chrome.unicodeScalars.allSatisfy { $0.isASCII }, "only ASCII besides Sam's words:\n\(shown)")
        XCTAssertTrue(shown.screenLines.contains { $0.hasPrefix("> ") }, shown)
        try world.expectSuccess(world.box.rchat("alice", ["settings", "glyphs", "unicode"]))
        try screen("alice", "Unicode again") { Self.glyph(of: "waiting for a relay", in: $0) == unicode }
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "quit cleanly") { $0.contains("[exited 0]") }
    }

    /// `rchat rename` in another terminal while the view shows the conversation: the header
    /// and the list take the new name; the window, its rows and the draft stay; what arrives
    /// next lands in it.
    func testRenameFromTheCommandLineKeepsTheOpenWindowAndDraft() throws {
        try world.makePair("alice", "sam")
        try world.send("sam", to: "Alice", "before the rename")
        try world.startSync("sam")
        try openView("alice")
        try screen("alice", "the list with Sam") { $0.contains("Sam") && $0.contains("Online") }
        try screens.keys(session("alice"), "Enter")
        try screen("alice", "Sam's message") { Self.conversationLine("before the rename", in: $0) != nil }
        try screens.keys(session("alice"), "half a draft", literal: true)
        try screen("alice", "the draft in the composer") { $0.contains("half a draft") }

        try world.expectSuccess(world.box.rchat("alice", ["rename", "Sam", "Samuel"]))
        let renamed = try screen("alice", "the new name in the header") { $0.screenLines.first?.contains("Samuel") ?? false }
        XCTAssertNotNil(Self.conversationLine("before the rename", in: renamed), renamed)
        XCTAssertTrue(renamed.contains("half a draft"), renamed)
        try world.send("sam", to: "Alice", "after the rename")
        try screen("alice", "the next message in the same window") { s in
            Self.conversationLine("after the rename", in: s) != nil && Self.conversationLine("before the rename", in: s) != nil
                && s.contains("half a draft")
        }
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "asked before quitting with a draft") { $0.contains("Your draft to Samuel is kept") }
        try screens.keys(session("alice"), "y")
        try screen("alice", "quit cleanly") { $0.contains("[exited 0]") }
    }

    /// The composer's last row: what is typed there, or its placeholder.
    static func composerRow(_ screen: String) -> String {
        screen.screenLines.last { !$0.isEmpty && !$0.hasPrefix("[exited") } ?? ""
    }

    /// A draft typed to Sam survives Ctrl-Q (which asks first and says it is kept) and a
    /// restart of the view; Ctrl-C clears a typed line without quitting, and the cleared line
    /// does not come back after the next restart.
    func testADraftSurvivesCtrlQAndARestartAndCtrlCClearsALine() throws {
        try world.makePair("alice", "sam")
        // Each start in a session of its own: the one before stays (showing how it ended),
        // so the tmux server never exits between them.
        // The first start opens Sam with Enter in the list; every later one reopens him by
        // itself (the conversation open when the view quit).
        func openSam(_ view: String) throws {
            try openView(view, home: "alice")
            if view == "alice" {
                try screen(view, "the list with Sam") { $0.contains("Sam") }
                try screens.keys(session(view), "Enter")
            }
            try screen(view, "Sam's conversation open") { $0.screenLines.first?.contains("Sam") ?? false }
        }
        try openSam("alice")
        try screens.keys(session("alice"), "draft for sam", literal: true)
        try screen("alice", "the draft in the composer") { Self.composerRow($0).contains("draft for sam") }
        try screens.keys(session("alice"), "C-q")
        let asked = try screen("alice", "asked before quitting") { $0.contains("Quit?") && $0.contains("Your draft to Sam is kept") }
        XCTAssertFalse(asked.contains("[exited"), asked)
        try screens.keys(session("alice"), "y")
        try screen("alice", "quit cleanly") { $0.contains("[exited 0]") }
        try stopLinger("alice")

        try openSam("restarted")
        try screen("restarted", "the draft back in Sam's composer after the restart") { Self.composerRow($0).contains("draft for sam") }
        try screens.keys(session("restarted"), "C-c")
        let cleared = try screen("restarted", "Ctrl-C cleared the line") { Self.composerRow($0).contains("Message Sam") }
        XCTAssertFalse(cleared.contains("[exited"), "Ctrl-C with text clears, it does not quit:\n\(cleared)")
        XCTAssertNil(Self.conversationLine("draft for sam", in: cleared), "cleared, not sent:\n\(cleared)")
        try screens.keys(session("restarted"), "C-q")
        try screen("restarted", "nothing typed: quit without a question") { $0.contains("[exited 0]") }
        try stopLinger("alice")

        try openSam("third")
        let third = try screen("third", "an empty composer after the next restart") { Self.composerRow($0).contains("Message Sam") }
        XCTAssertFalse(third.contains("draft for sam"), third)
        try screens.keys(session("third"), "C-q")
        try screen("third", "quit cleanly") { $0.contains("[exited 0]") }
    }

    /// The view killed (SIGKILL: nothing of its own runs) a moment after typing: the draft
    /// was written while typing, and comes back in the next view.
    func testADraftTypedAMomentBeforeTheViewIsKilledComesBack() throws {
        try world.makePair("alice", "sam")
        try openView("alice")
        try screen("alice", "the list with Sam") { $0.contains("Sam") }
        try screens.keys(session("alice"), "Enter")
        try screen("alice", "Sam's conversation open") { $0.screenLines.first?.contains("Sam") ?? false }
        try screens.keys(session("alice"), "typed before the crash", literal: true)
        try screen("alice", "the draft in the composer") { Self.composerRow($0).contains("typed before the crash") }
        try world.eventually("the draft written while the view runs", timeout: 10) {
            let store = try Store(home: world.box.path("alice-home"))
            defer { store.close() }
            let contact = try XCTUnwrap(store.contact(named: "Sam"))
            return try store.draft(contact: contact.id)?.text == "typed before the crash"
        }
        // The view is the shell's child in the pane (env execs rchat): killed by its PID.
        let shell = try XCTUnwrap(Int32(try screens.tmux(["display-message", "-p", "-t", session("alice"), "#{pane_pid}"])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let children = try String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)
        let view = try XCTUnwrap(children.split(separator: " ").compactMap { Int32($0) }.first, "the view's PID")
        XCTAssertEqual(kill(view, SIGKILL), 0)
        try screen("alice", "the view killed") { $0.contains("[exited 137]") }

        try openView("restarted", home: "alice")
        // Sam's conversation was open when the view died: it opens again by itself.
        try screen("restarted", "Sam reopened") { $0.screenLines.first?.contains("Sam") ?? false }
        try screen("restarted", "the draft back after the crash") { Self.composerRow($0).contains("typed before the crash") }
        try screens.keys(session("restarted"), "C-q")
        try screen("restarted", "asked: the draft is kept") { $0.contains("Your draft to Sam is kept") }
        try screens.keys(session("restarted"), "y")
        try screen("restarted", "quit cleanly") { $0.contains("[exited 0]") }
    }

    /// `/code` in a real terminal: the code is drawn from the left edge in whole rows (a
    /// selection of them, line breaks and all, is the code) and reaches the terminal's
    /// clipboard by OSC 52 (tmux keeps it as a buffer); pasted into another view's `/add`
    /// with those line breaks, it adds the contact.
    func testCodeIsCopiedAndAPasteAcrossRowsAddsTheContact() throws {
        try world.makeAccount("alice")
        try world.makeAccount("sam")
        let code = try world.code("alice")
        try openView("alice", columns: 80)
        try screens.tmux(["set-option", "-s", "set-clipboard", "on"])
        try screens.type(session("alice"), "/code")
        let shown = try screen("alice", "the code overlay") { $0.contains("Your code") && $0.contains("rchat-2-") }
        let lines = shown.screenLines
        let first = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("rchat-2-") }, "the code starts at the left edge:\n\(shown)")
        let rows = (code.count + 79) / 80
        XCTAssertGreaterThan(rows, 1, "an 80-column screen needs several rows for a code")
        let selection = lines[first..<(first + rows)].map { $0.trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(selection.joined(), code, shown)
        try world.eventually("the code on tmux's clipboard", timeout: 10) {
            try screens.tmux(["show-buffer"]).stdout == code
        }

        try openView("sam", columns: 80)
        try screen("sam", "Sam's view") { $0.contains("rChat") }
        try screens.keys(session("sam"), "/add ", literal: true)
        // As a mouse copy of the rows gives it: line breaks between them; pasted bracketed.
        try screens.tmux(["set-buffer", "-b", "selection", selection.joined(separator: "\n")])
        try screens.tmux(["paste-buffer", "-p", "-b", "selection", "-t", session("sam")])
        try screens.keys(session("sam"), "Enter")
        try screen("sam", "Alice added from the pasted code") { $0.contains("Added Alice.") }
        XCTAssertEqual(try world.contacts("sam").map(\.name), ["Alice"])
        try screens.keys(session("sam"), "C-q")
        try screen("sam", "quit cleanly") { $0.contains("[exited 0]") }
    }

    /// A block of three lines pasted (bracketed, as tmux's `paste-buffer -p` sends it, line
    /// breaks as CR) lands in the composer as one draft of three rows; Enter sends it as one
    /// message, which the peer stores with its line breaks. A reply of two lines sent with
    /// `rchat send` shows on two rows of the conversation and lists with its "\n".
    func testAPastedBlockIsOneMessageOfSeveralLines() throws {
        try world.makePair("alice", "sam")
        try world.startSync("sam")
        try openView("alice")
        try screen("alice", "the list with Sam") { $0.contains("Sam") && $0.contains("Online") }
        try screens.keys(session("alice"), "Enter")
        try screen("alice", "the composer addressed to Sam") { $0.contains("Message Sam") }
        try screens.tmux(["set-buffer", "-b", "block", "first pasted line\nsecond pasted line\nthird pasted line"])
        try screens.tmux(["paste-buffer", "-p", "-b", "block", "-t", session("alice")])
        let drafted = try screen("alice", "the three lines in the composer") { $0.contains("third pasted line") }
        let rows = drafted.screenLines
        let first = try XCTUnwrap(rows.firstIndex { $0.contains("first pasted line") }, drafted)
        XCTAssertTrue(rows[first + 1].contains("second pasted line") && rows[first + 2].contains("third pasted line"),
                      "one row per line:\n\(drafted)")
        XCTAssertTrue(rows[first - 1].contains("Online"), "the status bar moved up above the composer's rows:\n\(drafted)")
        XCTAssertTrue(try world.list("sam", "Alice").isEmpty, "nothing was sent by the line breaks")

        try screens.keys(session("alice"), "Enter")
        try world.eventually("Sam stored one message of three lines", timeout: 15) {
            try world.list("sam", "Alice").map(\.text) == ["first pasted line\nsecond pasted line\nthird pasted line"]
        }
        try world.send("sam", to: "Alice", "a reply\nover two lines")
        let shown = try screen("alice", "the reply on two rows") { s in
            Self.conversationLine("over two lines", in: s) != nil && Self.conversationLine("a reply", in: s) != nil
        }
        let reply = try XCTUnwrap(shown.screenLines.firstIndex { $0.contains("a reply") }, shown)
        let column = try XCTUnwrap(shown.screenLines[reply].range(of: "a reply")).lowerBound.utf16Offset(in: shown.screenLines[reply])
        let next = shown.screenLines[reply + 1]
        XCTAssertEqual(next.range(of: "over two lines")?.lowerBound.utf16Offset(in: next), column,
                       "the second line hangs under the first:\n\(shown)")
        XCTAssertEqual(try world.list("alice", "Sam").map(\.text),
                       ["first pasted line\nsecond pasted line\nthird pasted line", "a reply\nover two lines"])
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "quit cleanly") { $0.contains("[exited 0]") }
    }

    /// Ctrl-X Ctrl-E: the draft goes to $EDITOR in a 0600 file in the account's home, the
    /// editor's text comes back as the draft (not sent until Enter), and the file is gone.
    func testCtrlXCtrlEComposesInTheEditor() throws {
        try world.makePair("alice", "sam")
        try world.startSync("sam")
        let side = world.box.path("editor-saw")
        let script = world.box.path("editor.sh")
        try """
        #!/bin/sh
        stat -c %a "$1" > \(side).mode
        printf '%s' "$1" > \(side).path
        cat "$1" > \(side).draft
        printf 'from the editor\\nits second line\\n' > "$1"
        """.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o700)
        try openView("alice", env: Self.utf8.merging(["EDITOR": script, "VISUAL": ""]) { $1 })
        try screen("alice", "the list with Sam") { $0.contains("Sam") && $0.contains("Online") }
        try screens.keys(session("alice"), "Enter")
        try screen("alice", "the composer addressed to Sam") { $0.contains("Message Sam") }
        try screens.keys(session("alice"), "the draft", literal: true)
        try screen("alice", "the draft typed") { $0.contains("the draft") }
        try screens.keys(session("alice"), "C-x", "C-e")
        try screen("alice", "the editor's text as the draft") { $0.contains("from the editor") && $0.contains("its second line") }
        XCTAssertEqual(try String(contentsOfFile: side + ".draft", encoding: .utf8), "the draft")
        XCTAssertEqual(try String(contentsOfFile: side + ".mode", encoding: .utf8), "600\n")
        let path = try String(contentsOfFile: side + ".path", encoding: .utf8)
        XCTAssertTrue(path.hasPrefix(world.box.path("alice-home") + "/"), path)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the draft's file is removed")
        XCTAssertTrue(try world.list("alice", "Sam").isEmpty, "nothing sent before Enter")
        try screens.keys(session("alice"), "Enter")
        try world.eventually("Sam stored the editor's message", timeout: 15) {
            try world.list("sam", "Alice").map(\.text) == ["from the editor\nits second line"]
        }
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "quit cleanly") { $0.contains("[exited 0]") }
    }

    /// Readline keys as a real terminal sends them: Ctrl-Left arrives as an extended key
    /// code where the terminfo entry names it (xterm's kLFT5) and as raw bytes where it does
    /// not (screen); Home and End edit the line being typed.
    func testWordAndLineKeysInARealTerminal() throws {
        try world.makeAccount("alice")
        for term in ["xterm-256color", "screen"] {
            // A session of its own per terminal type: the last one stays (its view quit), so
            // the tmux server is never left without sessions in between.
            let person = "alice-\(term)"
            try openView(person, home: "alice", env: ["LANG": "C.UTF-8", "TERM": term])
            try screen(person, "the empty composer") { $0.contains("/add CODE adds a contact") }
            try screens.keys(session(person), "one two three", literal: true)
            try screens.keys(session(person), "C-Left")
            try screens.keys(session(person), "X", literal: true)
            try screens.keys(session(person), "Home")
            try screens.keys(session(person), "Y", literal: true)
            try screens.keys(session(person), "End")
            try screens.keys(session(person), "Z", literal: true)
            try screens.keys(session(person), "M-b", "M-b", "M-d")
            try screen(person, "the edits in place") { $0.contains("Yone  XthreeZ") }
            try screens.keys(session(person), "C-c")   // cleared: nothing typed, so Ctrl-Q quits without asking
            try screen(person, "the line cleared") { !$0.contains("Yone  XthreeZ") }
            try screens.keys(session(person), "C-q")
            try screen(person, "quit cleanly") { $0.contains("[exited 0]") }
            try stopLinger("alice")
        }
    }

    /// Alice's view open on her conversation with Sam, Carol's in the list; Sam's and Carol's
    /// syncs running, Sam's first message ("before the view") stored before the view opened
    /// (so it alerts nothing). `settings` are set for Alice first.
    func aliceViewOnSamWithCarolElsewhere(settings: [(String, String)], env: [String: String] = utf8,
                                          desktopAlerts: String = "off") throws {
        try world.makePair("alice", "sam")
        try world.makeAccount("carol")
        try world.add("alice", "carol")
        try world.add("carol", "alice")
        for (key, value) in settings { try world.expectSuccess(world.box.rchat("alice", ["settings", key, value])) }
        try world.startSync("alice")
        try world.startSync("sam")
        let before = try world.send("sam", to: "Alice", "before the view")
        try world.waitForStatus("sam", "Alice", before, "Delivered")
        world.stopSync("alice")
        try world.startSync("carol")

        try openView("alice", env: env, desktopAlerts: desktopAlerts)
        try screen("alice", "the list with Sam and Carol") { $0.contains("Sam") && $0.contains("Carol") && $0.contains("Online") }
        try screens.keys(session("alice"), "Enter")
        let opened = try screen("alice", "a conversation open") { $0.contains("Message Sam") || $0.contains("Message Carol") }
        if !opened.contains("Message Sam") { try screens.keys(session("alice"), "C-n") }   // the other one
        try screen("alice", "Sam's conversation open") { Self.conversationLine("before the view", in: $0) != nil }
    }

    /// `bell on`: a message in another conversation rings the terminal bell (tmux flags the
    /// window); one in the open conversation does not.
    func testBellForAMessageInAnotherConversation() throws {
        try aliceViewOnSamWithCarolElsewhere(settings: [("bell", "on")])
        func bellFlag() throws -> String {
            try screens.tmux(["display-message", "-p", "-t", session("alice"), "#{window_bell_flag}"]).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        XCTAssertEqual(try bellFlag(), "0")
        try world.send("sam", to: "Alice", "in the open conversation")
        try screen("alice", "Sam's new message") { Self.conversationLine("in the open conversation", in: $0) != nil }
        XCTAssertEqual(try bellFlag(), "0", "no bell for the conversation on screen")
        try world.send("carol", to: "Alice", "from elsewhere")
        try screen("alice", "the banner for Carol") { $0.contains("Carol: New message") }
        try world.eventually("the bell rang", timeout: 10) { try bellFlag() == "1" }
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "quit cleanly") { $0.contains("[exited 0]") }
    }

    /// `rchat demo` in session "demo", Sam online. The demo asks nothing about desktop
    /// alerts (its folder is deleted on quit, and here there is no desktop either) and
    /// speaks of F1 for the keys.
    @discardableResult
    func openDemo() throws -> String {
        try screens.open(session("demo"), [Binaries.path("rchat"), "demo"], env: Self.utf8.merging(try noDesktop()) { $1 })
        let greeted = try screen("demo", "Sam's greeting") { $0.contains("Hi, I'm Sam") && $0.contains("Online") }
        XCTAssertFalse(greeted.contains("Show desktop alerts"), greeted)
        XCTAssertTrue(greeted.contains("F1 shows the keys"), greeted)
        return greeted
    }

    /// `rchat demo`: one command, and Sam answers what the user actually did — the text
    /// sent, and that it waited at the relay while Sam was offline.
    func testDemoStartsAndSamAnswersWhatHappened() throws {
        try openDemo()
        try screens.type(session("demo"), "hello from the test")
        let replied = try screen("demo", "Sam's reply", seconds: 20) { $0.contains("Got \u{201C}hello from the test\u{201D}") }
        XCTAssertTrue(replied.contains("Sending, then Sent"), replied)
        XCTAssertNotNil(Self.glyph(of: "hello from the test", in: replied))
        try screen("demo", "the message shown Read", escapes: true) { Self.glyphIsReversed("hello from the test", in: $0) }

        try screens.type(session("demo"), "/offline")
        try screen("demo", "Sam offline") { $0.contains("Sam is offline") }
        try screens.type(session("demo"), "written while away")
        try screen("demo", "the message written while Sam is away") { Self.glyph(of: "written while away", in: $0) != nil }
        try screens.type(session("demo"), "/online")
        let answered = try screen("demo", "Sam's answer about the wait", seconds: 20) {
            $0.contains("Got \u{201C}written while away\u{201D}") && $0.contains("I was offline when you wrote it")
        }
        XCTAssertTrue(answered.contains("the relay held it"), answered)
        try screens.keys(session("demo"), "C-q")
        try screen("demo", "the demo quit cleanly") { $0.contains("[exited 0]") }
    }

    /// The demo's `/newphone` (seed 000, "Tap to resend"): what waited is Not delivered, and
    /// `r` on the row sends it to Sam's new phone before any `/verify` — Sam reads it and answers.
    func testDemoNewPhoneResendReachesTheNewPhoneBeforeVerify() throws {
        try openDemo()
        try screens.type(session("demo"), "/offline")
        try screen("demo", "Sam offline") { $0.contains("Sam is offline") }
        try screens.type(session("demo"), "while you were away")
        try screen("demo", "the message held at the relay (Sent)") { Self.glyph(of: "while you were away", in: $0) == Self.shown(.sent) }
        try screens.type(session("demo"), "/newphone")
        try screen("demo", "Sam's new phone could not read it", seconds: 30) {
            $0.contains("1 message couldn't be read on Sam's phone.") && $0.contains("Sam is using a new device.")
                && $0.contains("Not delivered") && $0.contains("I'm on a new phone now")
        }
        XCTAssertFalse(try screens.capture(session("demo")).contains("on my new phone"), "Sam has not read anything yet")
        // Tab selects the newest item that offers Resend: the row. r sends it to the new phone.
        try screens.keys(session("demo"), "Tab")
        try screen("demo", "the row selected") { Self.selectedRow($0).contains("couldn't be read") }
        try screens.keys(session("demo"), "r")
        try screen("demo", "Sam's new phone read it and answered", seconds: 20) {
            $0.contains("Got \u{201C}while you were away\u{201D} on my new phone") && !$0.contains("Not delivered") && !$0.contains("[r] Resend")
        }
        XCTAssertTrue(try screens.capture(session("demo")).contains("Sam is using a new device."), "the row stays until /verify")
        try screens.keys(session("demo"), "C-q")
        try screen("demo", "the demo quit cleanly") { $0.contains("[exited 0]") }
    }
}

extension TUIEndToEndTests {
    /// An 8×8 PNG, red on top and blue below.
    static let redOverBluePNG: [UInt8] = [
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x08,
        0x00, 0x00, 0x00, 0x08, 0x08, 0x02, 0x00, 0x00, 0x00, 0x4b, 0x6d, 0x29, 0xdc, 0x00, 0x00, 0x00, 0x16, 0x49, 0x44, 0x41,
        0x54, 0x78, 0xda, 0x63, 0xf8, 0xcf, 0xc0, 0x80, 0x15, 0x31, 0x50, 0x51, 0x82, 0xaa, 0x86, 0x61, 0x97, 0x00, 0x00, 0xe9,
        0x30, 0x3f, 0xc1, 0x70, 0x48, 0x8c, 0xd8, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ]

    /// A photo Sam sends arrives in Alice's view as its line with a preview in the picture's
    /// colours under it (libchafa symbols, through real processes and a real relay); `s`
    /// saves a copy where she says, byte for byte; `/file` sends one back to Sam.
    func testAPhotoArrivesWithItsPreviewIsSavedAndFileSendsOne() throws {
        try world.makePair("alice", "sam")
        let picture = world.box.path("beach.png")
        try Data(Self.redOverBluePNG).write(to: URL(fileURLWithPath: picture))
        try world.expectSuccess(world.box.rchat("sam", ["send", "Alice", "--file", picture]))
        try world.startSync("sam")
        try openView("alice", env: Self.utf8.merging(["RCHAT_GRAPHICS": "symbols", "COLORTERM": "truecolor"]) { $1 })
        try screen("alice", "Sam listed, online") { $0.contains("Sam") && $0.contains("Online") }
        try screens.keys(session("alice"), "Enter")
        try screen("alice", "the photo's line") { $0.contains("Photo · beach.png · 79 B") }
        // The preview: the rows under the line carry the picture's red and blue.
        let escaped = try screen("alice", "the preview in the picture's colours", escapes: true) {
            $0.contains("255;0;0") && $0.contains("0;0;255")
        }
        let lines = escaped.screenLines
        let photoRow = try XCTUnwrap(lines.firstIndex { $0.contains("beach.png") })
        XCTAssertTrue(lines[photoRow + 1].contains("255;0;0"), "the first preview row is red:\n\(escaped)")

        // Up selects the newest item (the photo); s asks where, Enter saves there.
        let copy = world.box.path("copy.png")
        try screens.keys(session("alice"), "Tab", "Up")
        try screen("alice", "the photo selected") { Self.selectedRow($0).contains("beach.png") }
        try screens.keys(session("alice"), "s")
        try screen("alice", "the save prompt") { $0.contains("Save to: ") }
        try screens.keys(session("alice"), "C-u")
        try screens.type(session("alice"), copy)
        try screen("alice", "where it saved") { $0.contains("Saved to") }
        XCTAssertEqual(FileManager.default.contents(atPath: copy), Data(Self.redOverBluePNG))

        let notes = world.box.path("notes.txt")
        try Data("plans\n".utf8).write(to: URL(fileURLWithPath: notes))
        try screens.type(session("alice"), "/file \(notes)")
        try screen("alice", "the file's line, Delivered") { s in
            guard let line = Self.conversationLine("File · notes.txt", in: s) else { return false }
            return line.hasSuffix(Self.shown(.delivered)) || line.trimmingCharacters(in: .whitespaces).hasSuffix(Self.shown(.delivered))
        }
        // The preview moved up with the conversation: its colours went with it, none left
        // behind on the rows now showing other things.
        let moved = try screens.capture(session("alice"), escapes: true).screenLines
        let photoNow = try XCTUnwrap(moved.firstIndex { $0.contains("beach.png") })
        XCTAssertLessThan(photoNow, photoRow, "it moved")
        XCTAssertTrue(moved[photoNow + 1].contains("255;0;0"), moved.joined(separator: "\n"))
        for line in moved[(photoNow + 1 + 8)...] + moved[..<photoNow] {
            XCTAssertFalse(line.contains("255;0;0") || line.contains("0;0;255"), "no colour left behind: \(line)")
        }
        // The conversation goes: where the preview was is blank, its colours gone too (ncurses
        // never knew them, so it would think those cells blank already).
        try screens.type(session("alice"), "/delete")
        try screens.keys(session("alice"), "y")
        try screen("alice", "Sam deleted") { $0.contains("Deleted Sam.") }
        let gone = try screens.capture(session("alice"), escapes: true)
        XCTAssertFalse(gone.contains("255;0;0") || gone.contains("0;0;255"), "no colour left behind:\n\(gone)")
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "Alice's view quit cleanly") { $0.contains("[exited 0]") }
    }

    /// `/voice` in a real view through a fake recorder on PATH (no sound card here) that
    /// writes a second of 48 kHz silence as a WAV and waits for SIGINT: Enter encodes it as
    /// Ogg Opus and sends it; it reaches Sam as a voice message, Delivered on Alice's screen
    /// with its length.
    func testVoiceRecordedInTheViewReachesSam() throws {
        try world.makePair("alice", "sam")
        try world.startSync("sam")
        let bin = world.box.path("fake-bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        // RIFF header of 96,000 bytes of 16-bit mono PCM at 48 kHz (octal: dash's printf).
        let header = #"RIFF\044\167\001\000WAVEfmt \020\000\000\000\001\000\001\000\200\273\000\000\000\167\001\000\002\000\020\000data\000\167\001\000"#
        let script = "#!/bin/sh\nfor a; do out=$a; done\n{ printf '\(header)'; head -c 96000 /dev/zero; } > \"$out\"\n"
            + "trap 'exit 0' INT\nwhile :; do sleep 0.05; done\n"
        for name in ["pw-record", "arecord"] {
            _ = FileManager.default.createFile(atPath: "\(bin)/\(name)", contents: Data(script.utf8), attributes: [.posixPermissions: 0o700])
        }
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        try openView("alice", env: Self.utf8.merging(["PATH": path]) { $1 })
        try screen("alice", "Sam listed, online") { $0.contains("Sam") && $0.contains("Online") }
        try screens.keys(session("alice"), "Enter")
        try screens.type(session("alice"), "/voice")
        try screen("alice", "recording") { $0.contains("Recording… 0:0") && $0.contains("Enter sends, Esc cancels") }
        // Enter once the recorder has written its second (a real one would still be writing).
        let home = world.box.path("alice-home")
        try world.eventually("the recorder wrote its file", timeout: 10) {
            let folders = try FileManager.default.contentsOfDirectory(atPath: home).filter { $0.hasPrefix(".rchat-voice-") }
            return folders.contains { folder in
                ((try? FileManager.default.attributesOfItem(atPath: "\(home)/\(folder)/recording.wav"))?[.size] as? Int) == 44 + 96_000
            }
        }
        try screens.keys(session("alice"), "Enter")
        try screen("alice", "the voice message with its length, Delivered") { s in
            guard let line = Self.conversationLine("Voice message 0:01 · voice-message.ogg", in: s) else { return false }
            return line.trimmingCharacters(in: .whitespaces).hasSuffix(Self.shown(.delivered))
        }
        let listed = try world.list("sam", "Alice")
        XCTAssertTrue(listed.contains { $0.direction == "in" && $0.text.hasPrefix("Voice message") }, "\(listed)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: home).filter { $0.hasPrefix(".rchat-voice-") }
        XCTAssertEqual(leftovers, [], "the recording's files are gone")
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "Alice's view quit cleanly") { $0.contains("[exited 0]") }
    }
}

extension TUIEndToEndTests {
    /// `ESC [ < B ; X ; Y M`: what a terminal in SGR mouse mode sends, at a 0-based cell.
    func mouse(_ person: String, button: Int, row: Int, column: Int, release: Bool = false) throws {
        try screens.keys(session(person), "\u{1B}[<\(button);\(column + 1);\(row + 1)\(release ? "m" : "M")", literal: true)
    }

    /// Whether the pane's program has asked tmux for mouse reports, and in SGR form.
    func mouseModes(_ person: String) throws -> String {
        try screens.tmux(["display-message", "-p", "-t", session(person), "#{mouse_any_flag} #{mouse_sgr_flag}"])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The mouse in a real terminal: the wheel over the conversation scrolls it and back,
    /// a click on a message selects it (its actions show in the status bar), a click on the
    /// list opens that conversation; `mouse off` (read at start) leaves the mouse alone.
    func testTheMouseScrollsSelectsAndOpens() throws {
        try world.makePair("alice", "sam")
        for i in 1...40 { try world.expectSuccess(world.box.rchat("sam", ["send", "Alice", "numbered \(i)"])) }
        try world.startSync("sam")
        try openView("alice")
        try screen("alice", "the list with Sam") { $0.contains("Sam") }
        try screens.keys(session("alice"), "Enter")
        try screen("alice", "the newest of Sam's messages", seconds: 20) { $0.contains("numbered 40") }
        XCTAssertEqual(try mouseModes("alice"), "1 1", "mouse reports asked for, SGR encoded")
        for _ in 0..<6 { try mouse("alice", button: 64, row: 10, column: 60) }
        let scrolled = try screen("alice", "scrolled up by the wheel") { !$0.contains("numbered 40") && $0.contains("numbered 3") }
        XCTAssertTrue(Self.composerRow(scrolled).contains("Message Sam"), "the focus stays in the composer")
        for _ in 0..<6 { try mouse("alice", button: 65, row: 10, column: 60) }
        try screen("alice", "back at the newest") { $0.contains("numbered 40") }

        let shown = try screens.capture(session("alice"))
        let row = try XCTUnwrap(shown.screenLines.firstIndex { $0.contains("numbered 39") })
        try mouse("alice", button: 0, row: row, column: 60)
        try mouse("alice", button: 0, row: row, column: 60, release: true)
        try screen("alice", "the clicked message selected") { $0.contains("i details") }

        // The list: Sam is its only entry, on the first body row.
        try mouse("alice", button: 0, row: 1, column: 3)
        try screen("alice", "still Sam, focus in the composer") { $0.screenLines.first?.contains("Sam") == true && !$0.contains("i details") }
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "quit cleanly") { $0.contains("[exited 0]") }
        try stopLinger("alice")

        XCTAssertEqual(try mouseModes("alice"), "0 0", "off again once the view quit")

        try world.expectSuccess(world.box.rchat("alice", ["settings", "mouse", "off"]))
        try openView("off", home: "alice")
        try screen("off", "Sam reopened") { $0.contains("numbered 40") }
        XCTAssertEqual(try mouseModes("off"), "0 0", "mouse off: the terminal keeps the mouse")
        try screens.keys(session("off"), "C-q")
        try screen("off", "quit cleanly") { $0.contains("[exited 0]") }
    }
}
