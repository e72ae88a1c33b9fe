import Foundation
import XCTest
import RChatCore
@testable import RChatTUI

/// The keys on a selected attachment (open, save), the save prompt, `/file` and `/photo`,
/// and Tab completing paths.
final class AttachmentKeyTests: FolderTestCase {
    /// Sam with a text, a complete photo and a file still moving; the photo selected.
    private func conversation(environment: [String: String]) -> (FakeChatModel, ChatView, photo: MessageID, moving: MessageID) {
        let model = FakeChatModel()
        model.contact("Sam")
        model.addMessage("Sam", .incoming, "look")
        let photo = model.addAttachment("Sam", .incoming, .photo, name: "../beach.jpg", size: 2_000, transfer: .complete(path: "/home/x/files/received/beach.jpg"))
        let moving = model.addAttachment("Sam", .incoming, .file, name: "big.iso", size: 1_000, transfer: .moving(done: 420))
        let view = makeView(model, options: TUIOptions(timeZone: utc, environment: environment), open: "Sam")
        view.press(.up, .up)   // the composer's Up is the history; from the conversation: select
        view.press(.tab)
        return (model, view, photo, moving)
    }

    private func select(_ view: ChatView, _ id: MessageID) {
        view.state.focus = .conversation
        view.state.selected = view.state.window?.items.firstIndex { if case .message(let m) = $0 { m.id == id } else { false } }
            .map { $0 + view.state.window!.start }
    }

    func testLettersActOnlyWithASelectionAndNothingTypedAltAlways() {
        let selected = KeyMap.Context(focus: .conversation, composerEmpty: true, selection: true)
        XCTAssertEqual(KeyMap.command(for: .character("o"), in: selected), .openAttachment)
        XCTAssertEqual(KeyMap.command(for: .character("s"), in: selected), .saveAttachment)
        XCTAssertEqual(KeyMap.command(for: .character("p"), in: selected), .playAttachment)
        let none = KeyMap.Context(focus: .conversation, composerEmpty: true, selection: false)
        XCTAssertEqual(KeyMap.command(for: .character("o"), in: none), .type("o"))
        let typing = KeyMap.Context(focus: .composer, composerEmpty: false)
        XCTAssertEqual(KeyMap.command(for: .character("s"), in: typing), .edit(.insert("s")))
        for (letter, command) in [("o", Command.openAttachment), ("s", .saveAttachment), ("p", .playAttachment)] {
            XCTAssertEqual(KeyMap.command(for: .alt(.character(Character(letter))), in: typing), command)
        }
        let keys = KeyMap.help.map(\.keys).joined(separator: " ")
        for key in ["Alt-O, or o", "Alt-S, or s", "Alt-P, or p"] { XCTAssertTrue(keys.contains(key)) }
        XCTAssertTrue(KeyMap.slashHelp.contains { $0.command == "/file PATH" })
        XCTAssertTrue(KeyMap.slashHelp.contains { $0.command == "/photo PATH" })
        XCTAssertTrue(KeyMap.slashHelp.contains { $0.command == "/voice" })
    }

    func testTheHintNamesTheKeysOfTheSelectedAttachment() {
        let home = folder("home")
        let (model, view, photo, _) = conversation(environment: ["HOME": home])
        select(view, photo)
        XCTAssertTrue(view.frame().line(22).contains("o open, s save"), view.frame().dump)
        let voice = model.addAttachment("Sam", .incoming, .voice, name: "v.ogg", size: 10, transfer: .complete(path: "/x/v.ogg"))
        view.handle([.newMessage(conversation: model.id("Sam"), id: voice, preview: "Voice message")])
        select(view, voice)
        XCTAssertTrue(view.frame().line(22).contains("p play"), view.frame().dump)
    }

    func testOpenStartsXdgOpenOnTheFileOrSaysItIsMissing() throws {
        let bin = folder("bin")
        let (_, view, photo, moving) = conversation(environment: ["PATH": bin])
        select(view, photo)
        view.press(.character("o"))
        XCTAssertTrue(view.frame().line(22).contains("No xdg-open here to open files: install xdg-utils"), view.frame().dump)

        let record = bin + "/opened"
        writeScript(bin + "/xdg-open", "printf '%s' \"$1\" > \(record).tmp && mv \(record).tmp \(record)")
        view.press(.character("o"))
        XCTAssertTrue(view.frame().line(22).contains("Opening ../beach.jpg."), view.frame().dump)
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: record) }, "xdg-open was started")
        XCTAssertEqual(try String(contentsOfFile: record, encoding: .utf8), "/home/x/files/received/beach.jpg")

        // Not whole here yet: says so, starts nothing.
        try FileManager.default.removeItem(atPath: record)
        select(view, moving)
        view.press(.alt(.character("o")))
        XCTAssertTrue(view.frame().line(22).contains("Not whole on this device yet (42%)"), view.frame().dump)
        // A text message has no file.
        view.state.selected = 0
        view.press(.character("o"))
        XCTAssertTrue(view.frame().line(22).contains("Only a photo, voice message or file can be opened."), view.frame().dump)
        XCTAssertFalse(FileManager.default.fileExists(atPath: record))
    }

    func testSaveAsksWhereOfferingDownloadsAndSaysWhereItSaved() throws {
        let home = folder("home")
        let (model, view, photo, _) = conversation(environment: ["HOME": home])
        select(view, photo)
        view.press(.character("s"))
        XCTAssertEqual(view.frame().line(23), "› Save to: ./beach.jpg", "no ~/Downloads: here, and never a path out of it")
        view.press(.escape)
        XCTAssertEqual(view.frame().line(23), "› Message Sam")
        XCTAssertTrue(view.frame().line(22).contains("Not saved."))
        XCTAssertTrue(model.saved.isEmpty)

        try FileManager.default.createDirectory(atPath: home + "/Downloads", withIntermediateDirectories: false)
        select(view, photo)
        view.press(.alt(.character("s")))
        XCTAssertEqual(view.frame().line(23), "› Save to: ~/Downloads/beach.jpg")
        // Typed letters edit the path, never act as commands.
        view.press(.control("u"))
        view.type("~/Downloads/sea.jpg")
        view.press(.enter)
        XCTAssertEqual(model.saved.count, 1)
        XCTAssertEqual(model.saved.first?.0, model.id("Sam"))
        XCTAssertEqual(model.saved.first?.1, photo)
        XCTAssertEqual(model.saved.first?.2, home + "/Downloads/sea.jpg", "~ expanded")
        XCTAssertTrue(view.frame().line(22).contains("Saved to /"), view.frame().dump)
        XCTAssertEqual(view.state.notice?.text, "Saved to \(home)/Downloads/sea.jpg.", "where it saved")
        XCTAssertNil(view.state.prompt)

        // The model refusing is its one line, and the path stays to be put right.
        model.failNextSave = ChatModelError("/nowhere/x.jpg: no such folder")
        select(view, photo)
        view.press(.character("s"), .control("u"))
        view.type("/nowhere/x.jpg")
        view.press(.enter)
        XCTAssertTrue(view.frame().line(22).contains("/nowhere/x.jpg: no such folder"), view.frame().dump)
        XCTAssertEqual(view.frame().line(23), "› Save to: /nowhere/x.jpg")

        // Alt edits the path as it edits a message; Esc with a key read together cancels,
        // and the key goes where it would have gone.
        view.press(.alt(.character("b")), .alt(.backspace))
        XCTAssertEqual(view.frame().line(23), "› Save to: /nowhere/jpg")
        view.press(.alt(.character("x")))
        XCTAssertNil(view.state.prompt)
        XCTAssertEqual(view.state.composer.text, "x")
        XCTAssertEqual(model.saved.count, 1)
    }

    func testFileAndPhotoSendThePathTheModelRefusesInOneLine() {
        let home = folder("home")
        let model = FakeChatModel()
        model.contact("Sam")
        let view = makeView(model, options: TUIOptions(timeZone: utc, environment: ["HOME": home]), open: "Sam")
        view.type("/file ~/notes/plan b.txt")
        view.press(.enter)
        view.type("/photo \(home)/cat.jpg")
        view.press(.enter)
        XCTAssertEqual(model.filesSent.map(\.1), [home + "/notes/plan b.txt", home + "/cat.jpg"])
        XCTAssertEqual(model.filesSent.map(\.2), [nil, .photo])
        XCTAssertTrue(model.filesSent.allSatisfy { $0.0 == model.id("Sam") })
        XCTAssertTrue(view.frame().line(22).contains("Sending cat.jpg."), view.frame().dump)

        model.failNextSend = ChatModelError("no file at none")
        view.type("/file none")
        view.press(.enter)
        XCTAssertTrue(view.frame().line(22).contains("no file at none"), view.frame().dump)
        XCTAssertEqual(view.state.composer.text, "/file none", "kept to be put right")
        view.press(.control("u"))
        view.type("/file")
        view.press(.enter)
        XCTAssertTrue(view.frame().line(22).contains("Usage: /file PATH"), view.frame().dump)
        XCTAssertEqual(model.filesSent.count, 2)
    }

    func testTabCompletesPathsInCommandsAndInTheSavePrompt() throws {
        let dir = folder("paths")
        try FileManager.default.createDirectory(atPath: dir + "/photos", withIntermediateDirectories: false)
        for name in ["photo.jpg", "notes.txt", ".hidden"] { _ = FileManager.default.createFile(atPath: dir + "/" + name, contents: Data()) }
        let model = FakeChatModel()
        model.contact("Sam")
        let view = makeView(model, options: TUIOptions(timeZone: utc, environment: ["HOME": dir]), open: "Sam")
        view.type("/file ~/no")
        view.press(.tab)
        XCTAssertEqual(view.state.composer.text, "/file ~/notes.txt")
        view.press(.control("u"))
        view.type("/photo  \(dir)/pho")
        view.press(.tab)
        XCTAssertEqual(view.state.composer.text, "/photo  \(dir)/photo", "the common part")
        XCTAssertTrue(view.frame().line(22).contains("photo.jpg  photos/"), view.frame().dump)
        view.type("s")
        view.press(.tab)
        XCTAssertEqual(view.state.composer.text, "/photo  \(dir)/photos/", "a folder gets its slash")
        view.press(.control("u"))
        view.type("/file ~/.h")
        view.press(.tab)
        XCTAssertEqual(view.state.composer.text, "/file ~/.hidden", "hidden only when asked for")
        view.press(.control("u"))
        view.type("/file ~/")
        view.press(.tab)
        XCTAssertFalse(view.frame().line(22).contains(".hidden"), view.frame().dump)
        view.press(.control("u"))
        view.type("/file ~/zzz")
        view.press(.tab)
        XCTAssertTrue(view.frame().line(22).contains("No file or folder starts that way."))

        // The save prompt completes the same way.
        let photo = model.addAttachment("Sam", .incoming, .photo, name: "p.jpg", size: 1, transfer: .complete(path: "/x/p.jpg"))
        view.handle([.newMessage(conversation: model.id("Sam"), id: photo, preview: "Photo")])
        view.press(.control("u"))
        select(view, photo)
        view.press(.character("s"), .control("u"))
        view.type("~/ph")
        view.press(.tab)
        view.type("s")
        view.press(.tab)
        XCTAssertEqual(view.frame().line(23), "› Save to: ~/photos/")
    }

    func testPathCompletionIsPure() {
        let entries = [TypedPath.Entry(name: "a b", isDirectory: true), TypedPath.Entry(name: "a c.txt", isDirectory: false)]
        XCTAssertEqual(TypedPath.complete("x/a", lead: "/file ", home: nil) { $0 == "x/" ? entries : nil },
                       .candidates("/file x/a ", ["a b/", "a c.txt"]))
        XCTAssertEqual(TypedPath.complete("a b", home: nil) { $0 == "." ? entries : nil }, .completed("a b/"))
        XCTAssertEqual(TypedPath.complete("~/a c", home: "/h") { $0 == "/h/" ? entries : nil }, .completed("~/a c.txt"))
        XCTAssertEqual(TypedPath.complete("nowhere/a", home: nil) { _ in nil }, .none)
        XCTAssertEqual(TypedPath.expanded("~", home: "/h"), "/h")
        XCTAssertEqual(TypedPath.expanded("~bob/x", home: "/h"), "~bob/x")
    }
}
