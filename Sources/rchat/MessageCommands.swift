import Foundation
import RChatCommandLine
import RChatCore
import RChatEngine

enum MessageCommands {
    static let all: [Command] = [sendCommand, syncCommand, listCommand, readCommand, resendCommand, saveCommand, timerCommand, reactCommand, editCommand, unsendCommand]

    static let timerCommand = Command(
        name: "timer", usage: "rchat timer NAME 30s|5m|1h|8h|1d|1w|4w|off",
        summary: "Set the conversation's disappearing-message timer, for both sides.",
        details: """
        Messages written from now on disappear that long after they were sent (yours) or
        first shown (theirs), on each device. The change travels as a control item with its
        own id, printed here; both sides show a row. If both sides change it at once, both
        end on the same one (changes are ordered by a counter, not by clocks).
        """
    ) { args, locations in
        try args.expectPositionals(max: 2)
        let name = try args.positional(0, "NAME")
        let word = try args.positional(1, "DURATION")
        guard let timer = DisappearingTimer(word: word) else { throw Arguments.UsageError(description: DisappearingTimer.wordsRefusal) }
        let account = try AccountService(locations: locations)
        let id: MessageID, shown: String
        switch try account.target(named: name) {
        case .group(let group):
            id = try account.setTimer(timer, for: group)
            shown = TerminalText.sanitized(group.name, breaks: .shown)
        case .contact(let contact):
            id = try account.setTimer(timer, for: contact)
            shown = TerminalText.sanitized(contact.name, breaks: .shown)
        }
        say(timer.phrase.map { "disappearing messages set to \($0) for \(shown)" } ?? "disappearing messages off for \(shown)")
        say(id.hex)
    }

    static let fileOption = Declared<String?>.text("--file", "PATH", help: "send this file instead of a text")
    static let replyOption = Declared<MessageID?>("--reply-to", "ID", default: nil,
                                                  help: "quote the message ID of the conversation (see rchat list NAME)",
                                                  expected: "a message id (32 hex digits)") { text -> MessageID?? in
        MessageID(hex: text).map { .some($0) }
    }
    static let asOption = Declared<AttachmentKind?>("--as", "KIND", default: nil,
                                                    help: "photo, voice or file (default: photo for an image, else file)",
                                                    expected: "photo, voice or file",
                                                    values: AttachmentKind.allCases.map(\.word)) { word -> AttachmentKind?? in
        AttachmentKind.allCases.first { $0.word == word }.map { .some($0) }
    }

    static let sendCommand = Command(
        name: "send", usage: "rchat send NAME TEXT [--reply-to ID] | rchat send NAME --file PATH [--as photo|voice|file]",
        summary: "Queue a message or a file (Sending) and print its id; a running engine sends it at once.",
        details: """
        Without a running `rchat sync` (or the full-screen view) the message waits in the
        outbox and goes out at the next one. TEXT is at most 60 KiB. A file is read once and
        kept in the account home; it is at most max-attachment-mb (rchat settings).
        --reply-to ID makes it a reply quoting that message of the conversation.
        """,
        options: [fileOption.option, asOption.option, replyOption.option]
    ) { args, locations in
        let name = try args.positional(0, "NAME")
        if let path = args[Self.fileOption] {
            guard args[Self.replyOption] == nil else { throw Arguments.UsageError(description: "--reply-to goes with a text, not --file") }
            try args.expectPositionals(max: 1)
            let id = try AccountService(locations: locations).sendFile(to: name, path: path, as: args[Self.asOption])
            say(id.hex)
            return
        }
        guard args[Self.asOption] == nil else { throw Arguments.UsageError(description: "--as goes with --file PATH") }
        try args.expectPositionals(max: 2)
        let text = try args.positional(1, "TEXT")
        let content: MessageContent = args[Self.replyOption].map { .reply(Reply(target: $0, text: text)) } ?? .text(text)
        let id = try AccountService(locations: locations).send(to: name, content: content)
        say(id.hex)
    }

    static let reactCommand = Command(
        name: "react", usage: "rchat react NAME ID EMOJI | rchat react NAME ID --remove",
        summary: "React to the message ID with one emoji (it replaces your earlier one), or take yours back.",
        details: """
        A reaction is an item of its own, sent to everyone in the conversation; it never
        changes the message's status. Prints the reaction's id. list --json shows each
        message's "reactions":[{"from":NAME,"emoji":EMOJI}].
        """,
        options: [.flag("--remove", help: "take your reaction back")]
    ) { args, locations in
        let name = try args.positional(0, "NAME")
        let id = try messageID(args.positional(1, "ID"))
        let emoji: String?
        if args.has("--remove") {
            try args.expectPositionals(max: 2)
            emoji = nil
        } else {
            try args.expectPositionals(max: 3)
            emoji = try args.positional(2, "EMOJI")
        }
        let account = try AccountService(locations: locations)
        say(try account.react(in: account.target(named: name), to: id, emoji: emoji).hex)
    }

    static let editCommand = Command(
        name: "edit", usage: "rchat edit NAME ID TEXT",
        summary: "Give your text message ID a new text, here and on everyone's side.",
        details: """
        Only your own text messages (and replies), for 24 hours after you sent them, at most
        10 times. The edit is an item of its own, sent to everyone in the conversation; the
        message keeps its status and shows "(edited)". Prints the edit's id. list --json
        adds "edited":true and "versions":[{"text":…,"at":<unix>}], the original first, and
        "pending":"edit Sending" while your edit is not Delivered to everyone.
        """
    ) { args, locations in
        try args.expectPositionals(max: 3)
        let name = try args.positional(0, "NAME")
        let id = try messageID(args.positional(1, "ID"))
        let text = try args.positional(2, "TEXT")
        let account = try AccountService(locations: locations)
        say(try account.edit(in: account.target(named: name), id: id, text: text).hex)
    }

    static let unsendCommand = Command(
        name: "unsend", usage: "rchat unsend NAME ID",
        summary: "Delete your message ID for everyone: its text, file and alerts, on every side.",
        details: """
        Only your own messages, for 24 hours after you sent them. Here it goes at once (its
        place stays, reading "This message was deleted."); on each member's side as the
        delete arrives. Prints the delete's id. list --json shows "deleted":true and no text.
        """
    ) { args, locations in
        try args.expectPositionals(max: 2)
        let name = try args.positional(0, "NAME")
        let id = try messageID(args.positional(1, "ID"))
        let account = try AccountService(locations: locations)
        say(try account.unsend(in: account.target(named: name), id: id).hex)
    }

    /// A message id as a command takes it: 32 hex digits, else one line saying so.
    static func messageID(_ text: String) throws -> MessageID {
        guard let id = MessageID(hex: text) else {
            throw Arguments.UsageError(description: "\"\(text)\" is not a message id (32 hex digits)")
        }
        return id
    }

    static let saveCommand = Command(
        name: "save", usage: "rchat save NAME ID PATH",
        summary: "Copy a file sent or received in the conversation to PATH (a new file, or a directory).",
        details: """
        Only a whole file: one still arriving, or discarded, is refused with the reason.
        Prints the path written.
        """
    ) { args, locations in
        try args.expectPositionals(max: 3)
        let name = try args.positional(0, "NAME")
        let id = try messageID(args.positional(1, "ID"))
        let path = try args.positional(2, "PATH")
        let account = try AccountService(locations: locations)
        say(try account.saveAttachment(named: name, id: id, to: path))
    }

    /// How long `rchat sync` runs: nil, until interrupted.
    static let seconds = Declared<Double?>("--seconds", "S", default: nil, help: "stop after S seconds",
                                           expected: "a number of seconds from 0 to \(86_400 * 365)") { text -> Double?? in
        guard let s = Double(text), s >= 0, s <= 86_400 * 365 else { return nil }
        return .some(s)
    }

    static let syncCommand = Command(
        name: "sync", usage: "rchat sync [--seconds S]",
        summary: "Run the engine headless: pair, send, receive, receipts, recovery, alerts.",
        details: """
        Runs for S seconds (default: until interrupted), then exits 0. Only one engine runs
        on a home at a time; `rchat send`, `read` and `resend` reach a running one at once.
        New messages alert as with `rchat check`: on the desktop when desktop alerts are
        on and one is reachable, else on standard error.
        """,
        options: [seconds.option]
    ) { args, locations in
        try args.expectPositionals(max: 0)
        let seconds = args[Self.seconds]
        let account = try AccountService(locations: locations)
        // A view that quit moments ago and lingers hands over; anything else running wins.
        guard let lock = try Linger.takeOver(locations) else {
            throw EngineError.io("another rchat is already running on \(locations.home)")
        }
        let engine = try Engine(account: account, log: engineLog)
        let center = AlertCenter(account: account)
        let sink: AlertSink = try center.desktopAllowed ? .detect(onClick: NotifyCommand.onClick(locations)) : .terminal
        let alerts = AlertFeed(center: center) { sink.post($0) }
        alerts.attach(to: engine)
        Signals.onTerminate { engine.stop() }
        try engine.run(seconds: seconds)
        alerts.finish()
        if let error = alerts.error { throw error }
        withExtendedLifetime(lock) {}
    }

    static let listCommand = Command(
        name: "list", usage: "rchat list NAME [--json]",
        summary: "Show the conversation: messages with their statuses, and system rows.",
        details: """
        --json prints one object per line, in conversation order:
        {"type":"message","id":"<hex>","direction":"out"|"in","text":"…","status":"Sending"|…|null,"resent":false,"at":<unix>}
        (a reply adds "reply_to":"<hex>", the message it quotes; a message reacted to,
        "reactions":[{"from":NAME,"emoji":EMOJI}], each person's latest; an edited one,
        "edited":true and its "versions"; one deleted for everyone, "deleted":true)
        {"type":"row","text":"<the row as shown>","action":"resend"|null,"ids":["<hex>",…]}
        """,
        options: [.flag("--json", help: "one JSON object per line")]
    ) { args, locations in
        try args.expectPositionals(max: 1)
        let name = try args.positional(0, "NAME")
        let items = try AccountService(locations: locations).conversation(name)
        for item in items {
            if args.has("--json") {
                say(ConversationText.json(item))
            } else {
                say(ConversationText.line(item))
            }
        }
    }

    static let readCommand = Command(
        name: "read", usage: "rchat read NAME",
        summary: "Mark the conversation shown; Read receipts go at the next sync."
    ) { args, locations in
        try args.expectPositionals(max: 1)
        let count = try AccountService(locations: locations).markRead(try args.positional(0, "NAME"))
        say("marked \(count) message\(count == 1 ? "" : "s") read")
    }

    static let resendCommand = Command(
        name: "resend", usage: "rchat resend NAME [ID|--all]",
        summary: "Resend: send messages that may not have arrived again, with their ids.",
        details: """
        Only messages that show Not delivered, Not confirmed or Failed to send, or that wait
        for you to verify the contact's new device (resending sends them to it). With no ID,
        or with --all, every such message in the conversation. The receiver shows each once.
        """,
        options: [.flag("--all", help: "every such message (the default with no ID)")]
    ) { args, locations in
        try args.expectPositionals(max: 2)
        let name = try args.positional(0, "NAME")
        var ids: [MessageID]?
        if args.positionals.count == 2 {
            guard !args.has("--all") else { throw Arguments.UsageError(description: "give an ID or --all, not both") }
            guard let id = MessageID(hex: args.positionals[1]) else {
                throw Arguments.UsageError(description: "\"\(args.positionals[1])\" is not a message id (32 hex digits)")
            }
            ids = [id]
        }
        let account = try AccountService(locations: locations)
        let target = try account.target(named: name)
        let outcome = try account.resend(target, ids: ids).refusingNothingSent(to: target.name)
        let count = outcome.resent.count
        say("sending \(count) message\(count == 1 ? "" : "s") again")
        if !outcome.keptForChangedKeys.isEmpty {
            say(AccountService.keysChangedRefusal(TerminalText.sanitized(target.name, breaks: .shown), count: outcome.keptForChangedKeys.count))
        }
    }
}

enum ContactStateCommands {
    static let all: [Command] = [
        make("block", .block, done: "blocked",
             "Block a contact or a group: nothing is sent to it and nothing from it is kept (what is queued is Failed to send)."),
        make("unblock", .unblock, done: "unblocked", "Unblock a contact or a group."),
        make("mute", .mute, done: "muted", "Mute a contact or a group: no alerts for its messages."),
        make("unmute", .unmute, done: "unmuted", "Unmute a contact or a group."),
        make("delete", .delete, done: "deleted", "Delete a contact (their code can add them again)."),
        settingsCommand,
    ]

    /// `done`: the confirmation's verb ("muted NAME").
    static func make(_ name: String, _ change: AccountService.ContactChange, done: String, _ summary: String) -> Command {
        Command(name: name, usage: "rchat \(name) NAME", summary: summary) { args, locations in
            try args.expectPositionals(max: 1)
            let contact = try args.positional(0, "NAME")
            try AccountService(locations: locations).change(contact, change)
            say("\(done) \(TerminalText.sanitized(contact, breaks: .shown))")
        }
    }

    static let settingsCommand = Command(
        name: "settings", usage: "rchat settings [KEY VALUE]",
        summary: "Show the settings, or change one.",
        details: Setting.allCases.map { $0.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0) + $0.help }
            .joined(separator: "\n")
    ) { args, locations in
        try args.expectPositionals(max: 2)
        let account = try AccountService(locations: locations)
        if args.positionals.isEmpty {
            for (setting, value) in try account.settingsList() { say("\(setting.rawValue) \(value)") }
            return
        }
        guard args.positionals.count == 2 else { throw Arguments.UsageError(description: "give KEY and VALUE") }
        try account.setSetting(args.positionals[0], args.positionals[1])
        say("\(args.positionals[0]) \(args.positionals[1])")
        if args.positionals == [Setting.desktopAlerts.rawValue, "on"], AlertSink.desktop() == nil {
            warn("no desktop here (no session bus or display): alerts here go to the terminal")
        }
    }
}
