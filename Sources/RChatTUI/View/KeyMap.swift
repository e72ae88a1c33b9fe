import RChatCore

/// What a key does where: a pure table, so tests check it without a terminal and the help
/// overlay is written from the same place.
public enum Command: Equatable, Sendable {
    case quit, redraw
    /// Ctrl-Z: back to the shell until the job is resumed (`fg`).
    case suspend
    case focusNext, focusPrevious
    case up, down, pageUp, pageDown, oldest, newest
    case open, nextConversation, previousConversation, firstUnread
    /// Alt-1…Alt-9: the n-th conversation of the list (from 1).
    case conversationNumber(Int)
    /// Alt-A: the next conversation with unread messages.
    case nextUnreadConversation
    case resend, details, help
    /// On a selected message: the next message sent answers it, quoting it.
    case reply
    /// On a selected message: edit one's own (the composer takes its text), delete one's own
    /// for everyone (asks first), react with a thumbs up (again: take it back).
    case editMessage, deleteMessage, reactMessage
    /// On a selected photo, voice message or file: open it (`xdg-open`), save a copy
    /// (asks where), play a voice message.
    case openAttachment, saveAttachment, playAttachment
    case leave
    case edit(Composer.Edit)
    /// Switch to the composer and type this.
    case type(Character)
    case submit
    /// Tab on a `/command`: complete the command's name, or the contact name it takes.
    case complete
    /// Ctrl-R: search the history backwards as you type.
    case searchHistory
    /// Ctrl-X: the first key of a two-key command (Ctrl-X Ctrl-E: compose in `$VISUAL`/`$EDITOR`).
    case ctrlX
    /// `a`, `d`, `b` on a message request: accept it, decline it (asks first), block it.
    case acceptRequest, declineRequest, blockRequest
    case none

    /// Whether the command may change what is typed or where the cursor is.
    var mayEditComposer: Bool {
        switch self {
        case .edit, .type, .submit: true
        default: false
        }
    }
}

public enum KeyMap {
    /// Where a key is pressed, as far as what it does depends on it.
    public struct Context: Equatable, Sendable {
        public var focus: Focus
        public var composerEmpty: Bool
        /// A message or row of the open conversation is selected.
        public var selection: Bool
        /// The composer holds a `/command` (Tab completes it).
        public var composerCommand: Bool
        /// The keys would answer a message request: the list's cursor is on one (in the
        /// list), or the open conversation is one (elsewhere).
        public var onRequest: Bool

        public init(focus: Focus, composerEmpty: Bool, selection: Bool = false, composerCommand: Bool = false,
                    onRequest: Bool = false) {
            self.focus = focus
            self.composerEmpty = composerEmpty
            self.selection = selection
            self.composerCommand = composerCommand
            self.onRequest = onRequest
        }
    }

    public static func command(for key: Key, focus: Focus, composerEmpty: Bool, selection: Bool = false) -> Command {
        command(for: key, in: Context(focus: focus, composerEmpty: composerEmpty, selection: selection))
    }

    /// A printable key types, wherever the focus is, except a command letter pressed while a
    /// message or row is selected and nothing is typed: words typed after Tab never quit,
    /// move or open anything. The same commands are on Alt-letters, which nobody types by
    /// accident.
    public static func command(for key: Key, in context: Context) -> Command {
        let editing = context.focus == .composer && !context.composerEmpty
        // Nothing can be written to a message request, only answered: with nothing typed,
        // its letters answer it wherever the focus is (a `/command` starts with the slash).
        if context.onRequest && context.composerEmpty {
            switch key {
            case .character("a"): return .acceptRequest
            case .character("d"): return .declineRequest
            case .character("b"): return .blockRequest
            default: break
            }
        }
        // Keys that mean the same everywhere.
        switch key {
        // With text in the composer, Home and End edit it; elsewhere they scroll.
        case .home where editing: return .edit(.start)
        case .end where editing: return .edit(.end)
        case .tab where context.focus == .composer && context.composerCommand: return .complete
        case .control("c"): return context.composerEmpty ? .quit : .edit(.clear)
        case .control("q"): return .quit
        case .control("l"): return .redraw
        case .control("z"): return .suspend
        case .control("n"): return .nextConversation
        case .control("p"): return .previousConversation
        case .tab: return .focusNext
        case .backTab: return .focusPrevious
        case .pageUp: return .pageUp
        case .pageDown: return .pageDown
        case .home: return .oldest
        case .end: return .newest
        case .function(1), .alt(.character("?")): return .help
        case .alt(.character("r")): return .resend
        case .alt(.character("i")): return .details
        case .alt(.character("q")): return .reply
        case .alt(.character("u")): return .firstUnread
        case .alt(.character("a")): return .nextUnreadConversation
        case .alt(.character("o")): return .openAttachment
        case .alt(.character("s")): return .saveAttachment
        case .alt(.character("p")): return .playAttachment
        case .alt(.character(let c)) where c.isASCII && ("1"..."9").contains(c): return .conversationNumber(Int(String(c)) ?? 1)
        default: break
        }
        switch context.focus {
        case .composer: return composerCommand(key)
        case .conversation, .list: return browsingCommand(key, context)
        }
    }

    /// In the composer every printable key types: a message may start with any character.
    private static func composerCommand(_ key: Key) -> Command {
        switch key {
        case .character(let c): return .edit(.insert(c))
        // Enter sends; Alt-Enter, and Shift-Enter where the terminal tells it apart, starts
        // a new line.
        case .enter: return .submit
        case .alt(.enter): return .edit(.insert("\n"))
        case .left, .control("b"): return .edit(.left)
        case .right, .control("f"): return .edit(.right)
        case .control("a"): return .edit(.start)
        case .control("e"): return .edit(.end)
        case .backspace, .control("h"): return .edit(.backspace)
        case .delete, .control("d"): return .edit(.delete)
        case .alt(.character("b")), .controlLeft: return .edit(.wordLeft)
        case .alt(.character("f")), .controlRight: return .edit(.wordRight)
        case .control("w"): return .edit(.deleteWordBackward)
        case .alt(.backspace): return .edit(.deleteAlphanumericWordBackward)
        case .alt(.character("d")): return .edit(.deleteWordForward)
        case .control("u"): return .edit(.deleteToStart)
        case .control("k"): return .edit(.deleteToEnd)
        case .control("y"): return .edit(.yank)
        case .control("r"): return .searchHistory
        case .control("x"): return .ctrlX
        case .up: return .edit(.lineUp)
        case .down: return .edit(.lineDown)
        case .escape: return .leave
        default: return .none
        }
    }

    private static func browsingCommand(_ key: Key, _ context: Context) -> Command {
        let letters = context.focus == .conversation && context.selection && context.composerEmpty
        switch key {
        case .up: return .up
        case .down: return .down
        case .enter: return context.focus == .list ? .open : .leave
        case .escape: return .leave
        case .character("?") where context.composerEmpty: return .help
        case .character("r") where letters: return .resend
        case .character("i") where letters: return .details
        case .character("q") where letters: return .reply
        case .character("e") where letters: return .editMessage
        case .character("d") where letters: return .deleteMessage
        case .character("+") where letters: return .reactMessage
        case .character("u") where letters: return .firstUnread
        case .character("o") where letters: return .openAttachment
        case .character("s") where letters: return .saveAttachment
        case .character("p") where letters: return .playAttachment
        case .character(let c): return .type(c)
        default: return .none
        }
    }

    /// The help overlay: every key, in the words a user needs.
    public static let help: [(keys: String, does: String)] = [
        ("Tab / Shift-Tab", "Move between the composer, the conversation and the list; on a /command: complete it"),
        ("Up / Down", "List: choose. Conversation: select a message or row. Composer: a line up / down, then the history"),
        ("Enter", "List: open the conversation. Composer: send the message or command"),
        ("Ctrl-N / Ctrl-P", "Open the next / previous conversation (each keeps its own draft)"),
        ("Alt-1 to Alt-9", "Open the 1st to 9th conversation of the list"),
        ("Alt-A", "Open the next conversation with unread messages (muted ones last)"),
        ("PgUp / PgDn", "Scroll the conversation by a screen"),
        ("Home / End", "Go to the oldest / newest message (in the composer with text: start / end of the line)"),
        ("Alt-U, or u", "Jump to the first unread message: what arrived below while scrolled up, else the New line (the letters u, r, i, q, e, d, +, o, s, p: only while a message or row is selected and nothing is typed; otherwise they type)"),
        ("Alt-R, or r", "Resend the selected message (on a row: Resend all its messages)"),
        ("Alt-I, or i", "Message details: its status timeline, each step with its time"),
        ("Alt-Q, or q", "Reply to the selected message: what you send next quotes it (Esc with nothing typed: no reply)"),
        ("Esc", "Back to the composer; close an overlay"),
        ("Ctrl-C", "Composer: clear what is typed; with nothing typed, quit"),
        ("F1 / Alt-?, or ?", "This help (? outside the composer, with nothing typed)"),
        ("Ctrl-L", "Redraw the screen"),
        ("Ctrl-Z", "Back to the shell; fg comes back"),
        ("Ctrl-Q", "Quit (asks first while something is typed; drafts are kept)"),
        ("Alt-Enter / Shift-Enter", "Composer: a new line in the message (Shift-Enter where the terminal tells it from Enter; a paste keeps its line breaks)"),
        ("Ctrl-A / Ctrl-E", "Composer: start / end of the line"),
        ("Left / Right", "Composer: move the cursor"),
        ("Alt-B / Alt-F", "Composer: a word left / right (Ctrl-Left / Ctrl-Right too)"),
        ("Backspace / Delete", "Composer: delete before / at the cursor"),
        ("Ctrl-W / Ctrl-U / Ctrl-K", "Composer: delete the word before / the line before / the line after the cursor"),
        ("Alt-Backspace / Alt-D", "Composer: delete the word before / after the cursor"),
        ("Ctrl-Y", "Composer: put back what the last delete-word or delete-line removed"),
        ("Ctrl-R", "Composer: search the sent messages (type to narrow, Ctrl-R older, Enter takes it, Esc / Ctrl-G back)"),
        ("Ctrl-X Ctrl-E", "Composer: write the message in $VISUAL or $EDITOR (else vi); also /edit"),
        ("Alt-O, or o", "Open the selected photo, voice message or file with its usual program (xdg-open)"),
        ("Alt-S, or s", "Save a copy of the selected photo, voice message or file (asks where; Tab completes the path)"),
        ("Alt-P, or p", "Play the selected voice message"),
        ("e", "Edit your selected text message: the composer takes its text, Enter sends the new one (24 hours, 10 times)"),
        ("d", "Delete your selected message for everyone (press d again to confirm; 24 hours)"),
        ("+", "React with a thumbs up to the selected message (again: take it back); /react EMOJI for another"),
        ("a / d / b", "On a message request (open, or chosen in the list, with nothing typed): accept it, pinning the keys "
                      + "in its code (or give them to the contact whose name it uses); decline it (asks first); block it"),
    ]

    /// The slash commands typed in the composer.
    public static let slashHelp: [(command: String, does: String)] = [
        ("/add CODE", "Add a contact from their code; in a group, /add NAME… adds contacts to it (an admin's)"),
        ("/members", "Who is in the open group: admins, and who vouches for each"),
        ("/remove NAME", "Take a member out of the open group (an admin's)"),
        ("/leave", "Leave the open group: nothing more is written to it"),
        ("/code", "Show your own code, to give to a friend"),
        ("/open NAME", "Open the conversation with NAME (Tab completes the name)"),
        ("/edit", "Write the message in $VISUAL or $EDITOR (else vi)"),
        ("/react EMOJI", "React to the selected message with one emoji (/react alone: take yours back)"),
        ("/rename NEW", "Give this conversation's contact a new name (a group: its name, for every member)"),
        ("/mute, /unmute", "Silence or restore banners for this conversation"),
        ("/block, /unblock", "Block or unblock this contact"),
        ("/safety [NAME]", "The safety number of this contact (or NAME), to compare with them in person or on a call"),
        ("/delete", "Delete this conversation and its messages (asks first)"),
        ("/timer DURATION", "Disappearing messages here, for both of you: 30s, 5m, 1h, 8h, 1d, 1w, 4w or off "
                            + "(Tab completes); /timer alone says the current one"),
        ("/file PATH", "Send a file (Tab completes the path)"),
        ("/photo PATH", "Send a picture as a photo, with its preview"),
        ("/voice", "Record a voice message: Enter sends it, Esc cancels"),
        ("/search WORDS", "Find messages with every word, in every conversation; Enter opens one there"),
        ("/reconnect", "Try the relay now, not at the next retry"),
        ("/help", "This help"),
        ("/quit", "Quit"),
    ]

    /// The commands that take a contact's name (Tab completes it after the command).
    public static let commandsTakingAName: Set<String> = ["open", "mute", "unmute", "block", "unblock", "delete", "safety"]

    /// The commands that take one of a few words, with them (Tab completes them after the command).
    public static let commandWords: [String: [String]] = ["timer": DisappearingTimer.allCases.map(\.word)]

    /// The commands that take a path (Tab completes it after the command).
    public static let commandsTakingAPath: Set<String> = ["file", "photo"]

    /// Every command's name as typed after the slash, from `slashHelp`.
    public static var slashCommandNames: [String] {
        slashHelp.flatMap { entry in
            entry.command.split(separator: ",").compactMap { part in
                part.split(separator: " ").first.map { String($0.dropFirst()) }
            }
        }
    }
}
