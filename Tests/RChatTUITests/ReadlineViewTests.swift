import Foundation
import Synchronization
import XCTest
import RChatCore
@testable import RChatTUI

/// Readline keys as the view takes them: Home/End, word keys, Ctrl-Y, Ctrl-R shown on the
/// composer row, Tab completion, Ctrl-X Ctrl-E handed to the backend.
final class ReadlineViewTests: XCTestCase {
    func testHomeAndEndEditWithTextAndScrollWithout() {
        XCTAssertEqual(KeyMap.command(for: .home, focus: .composer, composerEmpty: false), .edit(.start))
        XCTAssertEqual(KeyMap.command(for: .end, focus: .composer, composerEmpty: false), .edit(.end))
        XCTAssertEqual(KeyMap.command(for: .home, focus: .composer, composerEmpty: true), .oldest)
        XCTAssertEqual(KeyMap.command(for: .home, focus: .conversation, composerEmpty: false), .oldest,
                       "in the conversation Home is the oldest message, draft or not")
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.type("ello world")
        view.press(.home)
        view.type("H")
        view.press(.end)
        view.type("!")
        XCTAssertEqual(view.state.composer.text, "Hello world!")
        XCTAssertNil(view.state.anchor, "nothing scrolled")
    }

    func testWordKeysKillAndYank() {
        let c = { (k: Key) in KeyMap.command(for: k, focus: .composer, composerEmpty: false) }
        XCTAssertEqual(c(.alt(.character("b"))), .edit(.wordLeft))
        XCTAssertEqual(c(.controlLeft), .edit(.wordLeft))
        XCTAssertEqual(c(.alt(.character("f"))), .edit(.wordRight))
        XCTAssertEqual(c(.controlRight), .edit(.wordRight))
        XCTAssertEqual(c(.alt(.character("d"))), .edit(.deleteWordForward))
        XCTAssertEqual(c(.alt(.backspace)), .edit(.deleteAlphanumericWordBackward))
        XCTAssertEqual(c(.control("y")), .edit(.yank))
        XCTAssertEqual(c(.alt(.enter)), .edit(.insert("\n")))
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.type("one two three")
        // Ctrl-Left as xterm sends it, unrecognised by curses: Esc [ 1 ; 5 D.
        for key in KeyDecoder.folding([.escape] + "[1;5D".map { .character($0) }) { view.handle(key) }
        view.press(.alt(.character("b")), .alt(.character("d")))
        XCTAssertEqual(view.state.composer.text, "one  three")
        view.press(.end, .control("y"))
        XCTAssertEqual(view.state.composer.text, "one  threetwo")
        view.press(.alt(.backspace))
        XCTAssertEqual(view.state.composer.text, "one  ")
    }

    func testCtrlRIsShownLikeBashAndEnterTakesTheMatchWithoutSending() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        for line in ["see you at noon", "lunch?", "see you soon"] { view.type(line); view.press(.enter) }
        model.sent.removeAll()
        view.type("draft")
        view.press(.control("r"))
        view.type("noon")
        let screen = view.frame()
        XCTAssertEqual(screen.line(23), "› (reverse-i-search)'noon': see you at noon", screen.dump)
        XCTAssertEqual(screen.cursor?.row, 23)
        view.press(.enter)
        XCTAssertEqual(view.state.composer.text, "see you at noon")
        XCTAssertTrue(model.sent.isEmpty, "Enter takes the match into the composer; it does not send")
        view.press(.control("c"))
        view.type("mine")
        view.press(.control("r"))
        view.type("xyz")
        XCTAssertTrue(view.frame().line(23).contains("(failing reverse-i-search)'xyz'"))
        view.press(.control("g"))
        XCTAssertEqual(view.state.composer.text, "mine", "Ctrl-G gives the draft back")
        view.press(.control("r"))
        view.type("lun")
        view.press(.end)
        XCTAssertEqual(view.state.composer.text, "lunch?", "another key takes the match, then acts")
        XCTAssertEqual(view.state.composer.cursor, 6)
    }

    func testTabCompletesCommandsAndNamesAndOpenOpens() {
        let (model, _) = samConversation()
        model.contact("Sam Smith")
        let view = makeView(model, open: "Alex")
        view.type("/op")
        view.press(.tab)
        XCTAssertEqual(view.state.composer.text, "/open ")
        XCTAssertEqual(view.state.focus, .composer, "Tab on a command does not move the focus")
        view.type("s")
        view.press(.tab)
        XCTAssertEqual(view.state.composer.text, "/open Sam")
        XCTAssertTrue(view.frame().contains("Sam  Sam Smith"), "the candidates in the status bar:\n\(view.frame().dump)")
        view.type(" s")
        view.press(.tab)
        XCTAssertEqual(view.state.composer.text, "/open Sam Smith")
        view.press(.enter)
        XCTAssertEqual(view.state.openConversation, model.id("Sam Smith"))
        view.type("/re")
        view.press(.tab)
        XCTAssertTrue(view.frame().contains("rename  reconnect"))
        view.press(.control("c"))
        view.press(.tab)
        XCTAssertEqual(view.state.focus, .conversation, "with nothing typed Tab moves the focus as before")
    }

    func testCtrlXCtrlEHandsTheDraftToTheBackendAndTakesTheTextBack() {
        let (model, _) = samConversation()
        let view = makeView(model, options: TUIOptions(draftDirectory: "/nonexistent"), open: "Sam")
        view.type("half written")
        view.press(.control("x"))
        XCTAssertTrue(view.frame().contains("Ctrl-X: Ctrl-E writes the message in your editor"), "the status bar says what comes next")
        view.press(.control("e"))
        XCTAssertEqual(view.takeEditorRequest(), "half written")
        XCTAssertNil(view.takeEditorRequest(), "taken once")
        view.finishEditing(.edited("from the editor\nsecond line"))
        XCTAssertEqual(view.state.composer.text, "from the editor\nsecond line")
        XCTAssertTrue(model.sent.isEmpty)
        view.finishEditing(.failed("The editor (false) exited with status 1; the draft is kept."))
        XCTAssertEqual(view.state.composer.text, "from the editor\nsecond line", "a failed editor keeps the draft")
        XCTAssertTrue(view.frame().contains("exited with status 1"))
        view.press(.control("x"), .character("a"))
        XCTAssertNil(view.takeEditorRequest())
        XCTAssertTrue(view.state.composer.text.hasSuffix("linea"), "a key after Ctrl-X that is not Ctrl-E types as usual")
        view.press(.control("c"))
        view.type("/edit")
        view.press(.enter)
        XCTAssertEqual(view.takeEditorRequest(), "", "/edit opens the editor on an empty draft")
    }

    func testWithoutAHomeThereIsNoEditor() {
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        view.type("x")
        view.press(.control("x"), .control("e"))
        XCTAssertNil(view.takeEditorRequest())
        XCTAssertTrue(view.frame().contains("No editor here"))
    }

    func testHelpNamesEveryNewKey() {
        let keys = KeyMap.help.map { $0.keys + " " + $0.does }.joined(separator: " ")
        for key in ["Alt-Enter", "Shift-Enter", "Home / End", "Alt-B", "Alt-F", "Ctrl-Left", "Ctrl-Right", "Alt-D",
                    "Alt-Backspace", "Ctrl-Y", "Ctrl-R", "Ctrl-X Ctrl-E"] {
            XCTAssertTrue(keys.contains(key), key)
        }
        let commands = KeyMap.slashHelp.map(\.command)
        XCTAssertTrue(commands.contains("/open NAME") && commands.contains("/edit"))
    }
}

/// The editor for Ctrl-X Ctrl-E, run for real on small scripts.
final class ExternalEditorTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-editor-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: directory) }

    private func script(_ body: String) throws -> String {
        let path = directory + "/editor-\(UUID().uuidString.prefix(6)).sh"
        try ("#!/bin/sh\n" + body).write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o700)
        return path
    }

    /// Files left in the directory besides the scripts and what they wrote.
    private func drafts() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(".rchat-draft") }
    }

    func testTheEditorsTextComesBackAndTheFileIsPrivateAndGone() throws {
        let seen = directory + "/seen"
        let editor = try script("""
        stat -c %a "$1" > \(seen).mode
        printf '%s' "$1" > \(seen).path
        cat "$1" > \(seen).draft
        printf 'new text\\r\\nsecond line\\n\\n' > "$1"
        """)
        let outcome = ExternalEditor(environment: ["EDITOR": editor], directory: directory).edit("old draft\nline")
        XCTAssertEqual(outcome, .edited("new text\nsecond line"), "CRLF read as a line break, trailing breaks trimmed")
        XCTAssertEqual(try String(contentsOfFile: seen + ".draft", encoding: .utf8), "old draft\nline")
        XCTAssertEqual(try String(contentsOfFile: seen + ".mode", encoding: .utf8), "600\n")
        XCTAssertTrue(try String(contentsOfFile: seen + ".path", encoding: .utf8).hasPrefix(directory + "/.rchat-draft"))
        XCTAssertEqual(try drafts(), [], "the file is removed")
    }

    func testAFailingOrMissingEditorSaysSoAndLeavesNothing() throws {
        let failing = try script("echo changed > \"$1\"; exit 3")
        let outcome = ExternalEditor(environment: ["EDITOR": failing], directory: directory).edit("draft")
        XCTAssertEqual(outcome, .failed("The editor (\(failing)) exited with status 3; the draft is kept."))
        XCTAssertEqual(try drafts(), [])
        let missing = ExternalEditor(environment: ["EDITOR": directory + "/no-such-editor"], directory: directory).edit("draft")
        XCTAssertEqual(missing, .failed("No editor \(directory)/no-such-editor found: set $VISUAL or $EDITOR; the draft is kept."))
        XCTAssertEqual(try drafts(), [])
        let nowhere = ExternalEditor(environment: ["EDITOR": failing], directory: directory + "/gone").edit("draft")
        guard case .failed(let line) = nowhere else { return XCTFail("\(nowhere)") }
        XCTAssertTrue(line.hasPrefix("Could not write the draft"), line)
    }

    func testAnEditorThatStopsItselfIsWokenNotWaitedForForEver() throws {
        let editor = try script("kill -STOP $$\nprintf resumed > \"$1\"")
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<ExternalEditor.Outcome?>(nil)
        let directory = directory
        Thread.detachNewThread {
            let result = ExternalEditor(environment: ["EDITOR": editor], directory: directory).edit("")
            outcome.withLock { $0 = result }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "the view would hang on a stopped editor")
        XCTAssertEqual(outcome.withLock { $0 }, .edited("resumed"))
    }

    func testVisualThenEditorThenVi() {
        XCTAssertEqual(ExternalEditor.command(environment: ["VISUAL": "nano", "EDITOR": "ed"]), "nano")
        XCTAssertEqual(ExternalEditor.command(environment: ["VISUAL": " ", "EDITOR": "ed"]), "ed")
        XCTAssertEqual(ExternalEditor.command(environment: [:]), "vi")
    }

    func testAnEditorWithArguments() throws {
        let editor = try script("printf '%s' \"$1\" > \"$2\"")
        let outcome = ExternalEditor(environment: ["VISUAL": "\(editor) from-an-argument"], directory: directory).edit("")
        XCTAssertEqual(outcome, .edited("from-an-argument"))
    }
}

/// What the composer's own modes and the editor put in the composer is a draft like any
/// other: written a moment later, multi-line text and all.
final class ComposerDraftTests: XCTestCase {
    func testTheEditorsTextAndACtrlRMatchAreSavedAsTheDraft() {
        let (model, _) = samConversation()
        let view = makeView(model, options: TUIOptions(draftDirectory: "/nonexistent"), open: "Sam")
        let sam = model.id("Sam")
        view.press(.control("x"), .control("e"))
        _ = view.takeEditorRequest()
        view.finishEditing(.edited("from the editor\nsecond line"))
        XCTAssertEqual(view.nextDeadline, model.clock + DraftBook.saveDelay, "the editor's text is a change to write")
        model.clock += DraftBook.saveDelay
        _ = view.frame()
        XCTAssertEqual(model.drafts[sam]?.text, "from the editor\nsecond line")
        view.press(.enter)
        view.type("other")
        _ = view.frame()
        model.clock += DraftBook.saveDelay
        _ = view.frame()
        view.press(.control("r"))
        view.type("editor")
        view.press(.enter)   // the match taken: not sent, the draft now
        model.clock += DraftBook.saveDelay
        _ = view.frame()
        XCTAssertEqual(model.drafts[sam]?.text, "from the editor\nsecond line")
        XCTAssertEqual(model.sent.count, 1)
    }

    /// A view killed while its editor was open leaves its draft file; the next view removes
    /// it (and nothing else).
    func testLeftoverDraftFilesAreRemoved() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-leftover-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let left = directory + "/.rchat-draft-Ab12Cd", other = directory + "/notes.txt"
        try "half written".write(toFile: left, atomically: false, encoding: .utf8)
        try "keep".write(toFile: other, atomically: false, encoding: .utf8)
        ExternalEditor.removeLeftovers(in: directory)
        XCTAssertFalse(FileManager.default.fileExists(atPath: left))
        XCTAssertTrue(FileManager.default.fileExists(atPath: other))
    }
}
