import Foundation
import RChatCommandLine
import RChatCore
import RChatEngine

enum ContactCommands {
    static let all: [Command] = [addCommand, contactsCommand]

    static let addCommand = Command(
        name: "add", usage: "rchat add CODE [--name NAME]",
        summary: "Add a contact from their code, pinning their keys (or re-verify one).",
        details: """
        Entering a contact's code again ("scan in person") pins their current device key and
        clears Keys don't match. --name chooses the name shown here (default: the code's).
        """,
        options: [.text("--name", "NAME", help: "the name shown here (default: the code's)")]
    ) { args, locations in
        try args.expectPositionals(max: 1)
        let text = try args.positional(0, "CODE")
        let code: ContactCode
        do { code = try ContactCode(parsing: text) } catch { throw Arguments.UsageError(description: "\(error)") }
        if let name = args.value("--name"), !ContactCode.validName(name) {
            throw Arguments.UsageError(description: ContactCode.nameRule)
        }
        let result = try AccountService(locations: locations).addContact(code, name: args.value("--name"))
        let shown = TerminalText.sanitized(result.name, breaks: .shown)
        switch result.change {
        case .added: say("added \(shown)")
        case .alreadyPinned: say("\(shown) is already added with these keys")
        case .reverified: say("\(shown) verified again: new keys pinned")
        case .acceptedRequest: say("accepted the message request from \(shown)")
        }
        if result.droppedDamagedSession { say("its damaged saved session was dropped: the next one with \(shown) starts over") }
        say("safety number: \(result.safetyNumber)")
    }

    static let contactsCommand = Command(
        name: "contacts", usage: "rchat contacts [--json]",
        summary: "List contacts and their states.",
        details: """
        --json prints one object per line:
        {"name":"…","state":"ok"|"keys-dont-match"|"blocked"|"muted"|"request","unread":N,"timer":"off"|"30s"|…|"4w"}
        """,
        options: [.flag("--json", help: "one JSON object per line")]
    ) { args, locations in
        try args.expectPositionals(max: 0)
        let contacts = try AccountService(locations: locations).contactSummaries()
        if args.has("--json") {
            for c in contacts {
                say(JSONLine.object([("name", .string(c.name)), ("state", .string(c.state)), ("unread", .int(c.unread)),
                                     ("timer", .string(c.timer.word))]))
            }
        } else if contacts.isEmpty {
            say("no contacts yet: add one with `rchat add CODE`")
        } else {
            // Names in display columns, as a terminal draws them (a CJK name is twice as
            // wide as its letters, a combining mark adds nothing).
            let names = contacts.map { TerminalText.sanitized($0.name, breaks: .shown) }
            let width = names.map { TextWidth.columns(of: $0) }.max() ?? 0
            for (c, name) in zip(contacts, names) {
                let unread = c.unread > 0 ? "  \(c.unread) unread" : ""
                let timer = c.timer.phrase.map { "  disappearing after \($0)" } ?? ""
                say(TextWidth.padded(name, to: width + 2) + c.state + unread + timer)
            }
        }
    }
}
