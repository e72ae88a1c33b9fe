import Foundation
import RChatCore

/// Photos, voice messages and files: sending them (`/file`, `/photo`), the keys on a
/// selected one (open, save), the save prompt, and how fast the ones on screen move.
extension ChatView {
    /// The user's home directory, for `~` and `~/Downloads`.
    var userHome: String? { options.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } }

    /// The selected attachment when its file is whole on this device; otherwise nil, having
    /// said in one line why it cannot be `doing` (opened, saved, played).
    func selectedCompleteAttachment(_ doing: String) -> (conversation: ConversationID, message: MessageItem,
                                                          attachment: Attachment, path: String)? {
        guard let conversation = state.openConversation, let index = state.selected else {
            say("Select a photo, voice message or file first (Up/Down).")
            return nil
        }
        guard case .message(let m)? = state.window?.item(at: index), case .attachment(let a) = m.content else {
            say("Only a photo, voice message or file can be \(doing).")
            return nil
        }
        switch m.transfer {
        case .complete(let path)?:
            return (conversation, m, a, path)
        case .moving(let done, _)?:
            let percent = a.size == 0 ? 100 : Int(min(done, a.size) * 100 / a.size)
            say("Not whole on this device yet (\(percent)%): it can be \(doing) once it is.")
        case .discarded(let reason)?:
            say("This file was discarded: \(TerminalText.sanitized(reason, breaks: .shown))")
        case nil:
            say("This file is not on this device.")
        }
        return nil
    }

    /// `o`: the file opens in the program the desktop gives its type (`xdg-open`), started
    /// on its own: the view never waits for it.
    func openAttachment() {
        guard let (_, _, a, path) = selectedCompleteAttachment("opened") else { return }
        guard let opener = Launch.executable("xdg-open", path: options.environment["PATH"]) else {
            return say("No xdg-open here to open files: install xdg-utils, or save a copy (s) and open that.", error: true)
        }
        guard Launch.detached([opener, path]) != nil else { return say("Could not start xdg-open.", error: true) }
        say("Opening \(Self.shownName(a)).")
    }

    /// `s`: asks where to save a copy, offering `~/Downloads/NAME` (or `./NAME` when there
    /// is no Downloads folder).
    func askWhereToSave() {
        guard let (conversation, m, a, _) = selectedCompleteAttachment("saved") else { return }
        var isDirectory: ObjCBool = false
        let downloads = userHome.map { $0 + "/Downloads" }
        let hasDownloads = downloads.map { FileManager.default.fileExists(atPath: $0, isDirectory: &isDirectory) } == true
            && isDirectory.boolValue
        var field = Composer()
        // The sender's name made one safe file name: never hidden, never a way out of the folder.
        field.restore((hasDownloads ? "~/Downloads/" : "./") + AttachmentName.sanitised(a.name))
        state.prompt = .save(conversation: conversation, message: m.id, path: field)
    }

    static func shownName(_ a: Attachment) -> String { TerminalText.sanitized(a.name, breaks: .shown) }

    /// Keys while a prompt is up: the save prompt edits its path; a recording only takes
    /// Enter and Esc.
    func promptKey(_ key: Key) {
        switch state.prompt {
        case .save(let conversation, let message, var path)?:
            switch key {
            case .enter:
                save(conversation, message, to: path.text)
                return
            case .escape, .control("g"), .control("c"), .control("q"):
                state.prompt = nil
                return say("Not saved.")
            case .tab:
                completePath(&path, lead: "")
            default:
                let command = KeyMap.command(for: key, in: KeyMap.Context(focus: .composer, composerEmpty: path.isEmpty))
                if case .edit(let edit) = command, Self.editsOneLine(edit) {
                    path.apply(edit)
                } else if case .alt(let inner) = key {
                    // Esc and a key pressed quickly: the Esc cancels, the key does what it does.
                    state.prompt = nil
                    say("Not saved.")
                    return handle(inner)
                }
            }
            state.prompt = .save(conversation: conversation, message: message, path: path)
        case .recording?:
            recordingKey(key)
        case nil:
            break
        }
    }

    /// Edits that keep a field one line, outside the history.
    private static func editsOneLine(_ edit: Composer.Edit) -> Bool {
        switch edit {
        case .insert(let c): !c.isNewline
        case .lineUp, .lineDown, .historyPrevious, .historyNext: false
        default: true
        }
    }

    private func save(_ conversation: ConversationID, _ message: MessageID, to typed: String) {
        let typed = typed.trimmingCharacters(in: .whitespaces)
        guard !typed.isEmpty else { return say("Type where to save it, or Esc.", error: true) }
        do {
            let written = try model.saveAttachment(in: conversation, message: message, to: TypedPath.expanded(typed, home: userHome))
            state.prompt = nil
            say("Saved to \(TerminalText.sanitized(written, breaks: .shown)).")
        } catch {
            // The prompt stays with what was typed, to be put right.
            say(error.description, error: true)
        }
    }

    /// Tab on a path in a field: completes it, or lists the candidates in the status line.
    func completePath(_ field: inout Composer, lead: String) {
        let text = field.text
        let typed = String(text.dropFirst(lead.count))
        switch TypedPath.complete(typed, lead: lead, home: userHome, list: TypedPath.entries(of:)) {
        case .completed(let line): field.restore(line)
        case .candidates(let line, let all):
            field.restore(line)
            say(all.map { TerminalText.sanitized($0, breaks: .shown) }.joined(separator: "  "))
        case .none:
            say("No file or folder starts that way.")
        }
    }

    /// `/file PATH`, `/photo PATH`: the file goes as an attachment to the open
    /// conversation; what the model refuses is its one line, and the command stays typed.
    func sendAttachment(_ line: String, as kind: AttachmentKind?) {
        let typed = Self.argument(of: line)
        let command = kind == .photo ? "/photo" : "/file"
        guard !typed.isEmpty else { return say("Usage: \(command) PATH (Tab completes the path)", error: true) }
        guard let conversation = state.openConversation else {
            state.composer.restore(line)
            return say("Open a conversation first: Tab to the list, then Enter.", error: true)
        }
        let path = TypedPath.expanded(typed, home: userHome)
        let id: MessageID
        do {
            id = try model.sendFile(to: conversation, path: path, as: kind)
        } catch {
            state.composer.restore(line)
            return say(error.description, error: true)
        }
        say("Sending \(TerminalText.sanitized((path as NSString).lastPathComponent, breaks: .shown)).", lasts: .sending(id))
        goToNewest()
        state.window?.syncTail(model: model)
    }

    /// What follows a command's name, without the spaces around it.
    static func argument(of line: String) -> String {
        String(line.dropFirst().drop { !$0.isWhitespace }).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: Transfers

    /// The loaded attachments whose files are moving.
    private var movingTransfers: [(MessageID, UInt64)] {
        (state.window?.items ?? []).compactMap { item in
            if case .message(let m) = item, case .moving(let done, _)? = m.transfer { (m.id, done) } else { nil }
        }
    }

    /// While an attachment on screen moves, its item is read again at least four times a
    /// second (the engine's `transferMoved` reads it sooner), so its rate keeps being
    /// measured even while nothing arrives.
    func readTransfersIfDue() {
        guard !movingTransfers.isEmpty else {
            if !state.transfers.isEmpty { state.transfers = TransferRates() }
            return
        }
        guard clock.seconds() >= nextTransferRead else { return }
        state.window?.reload(model: model)
        recordTransfers()
    }

    /// The loaded items were just read: each moving one's `done` is a reading for its rate.
    func recordTransfers() {
        let at = clock.seconds()
        nextTransferRead = at + Self.transferReadInterval
        let moving = movingTransfers
        for (id, done) in moving { state.transfers.record(id, done: done, at: at) }
        state.transfers.keep(only: Set(moving.map(\.0)))
    }

    static let transferReadInterval = 0.25

    /// How soon the backend should come back without a key or an event, in milliseconds:
    /// a quarter second while a transfer moves on screen or a notice waits for something
    /// to end (a player, the demo's work), a second while recording.
    public var pollMilliseconds: Int32? {
        thread.check()
        return [transferPollMilliseconds, desktopAlertMilliseconds].compactMap { $0 }.min()
    }

    private var transferPollMilliseconds: Int32? {
        if !movingTransfers.isEmpty || state.notice?.needsLooking == true { return Int32(Self.transferReadInterval * 1000) }
        if case .recording? = state.prompt { return 1000 }
        return nil
    }
}
