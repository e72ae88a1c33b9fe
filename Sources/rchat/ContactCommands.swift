import Foundation
import RChatCommandLine
import RChatCore
import RChatEngine

enum ContactCommands {
    static let all: [Command] = [addCommand, contactsCommand, acceptCommand, declineCommand, safetyCommand]

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

    static let acceptCommand = Command(
        name: "accept", usage: "rchat accept NAME [--replace CONTACT]",
        summary: "Accept a message request, pinning the keys in its signed code.",
        details: """
        The keys come with the request, not from a code you checked in person: compare the
        safety number (rchat safety NAME) with them. --replace CONTACT gives CONTACT's
        conversation the request's keys instead (someone you know reinstalled rChat without
        their export): the request's messages join it, the old session ends, and what you
        wrote before is not sent again by itself.
        """,
        options: [.text("--replace", "CONTACT", help: "the contact whose conversation takes the request's keys")]
    ) { args, locations in
        try args.expectPositionals(max: 1)
        let name = try args.positional(0, "NAME")
        let account = try AccountService(locations: locations)
        let request = try account.request(named: name)
        let replaced = try args.value("--replace").map { name throws(EngineError) in try account.contact(named: name) }
        let accepted = try account.acceptRequest(request, replacing: replaced)
        let shown = TerminalText.sanitized(accepted.name, breaks: .shown)
        let from = TerminalText.sanitized(request.name, breaks: .shown)
        let did = accepted.replaced == nil ? "accepted the message request from \(shown)"
            : "\(shown) now has the keys of the message request from \(from)"
        say("\(did); the keys were not checked in person: compare the safety number (rchat safety \(shellWord(shown))) with them")
    }

    static let declineCommand = onName(
        "decline", "Decline a message request: it is deleted with its messages.",
        details: "Later requests from the same keys are dropped; adding their code brings them back."
    ) { account, name in
        let request = try account.request(named: name)
        try account.declineRequest(request)
        say("declined the message request from \(TerminalText.sanitized(request.name, breaks: .shown))")
    }

    static let safetyCommand = onName(
        "safety", "Print the safety number of a contact (or a message request), as add does.",
        details: "The same number shows on both sides for the same keys: compare it with them in person or on a call."
    ) { account, name in
        say("safety number: \(try account.safetyNumber(of: account.contact(named: name)))")
    }

    /// `rchat WORD NAME`: a command about one contact, named.
    static func onName(_ word: String, _ summary: String, details: String,
                       _ body: @escaping @Sendable (AccountService, String) throws -> Void) -> Command {
        Command(name: word, usage: "rchat \(word) NAME", summary: summary, details: details) { args, locations in
            try args.expectPositionals(max: 1)
            let name = try args.positional(0, "NAME")
            try body(try AccountService(locations: locations), name)
        }
    }

    /// A name as a shell takes it back as one word: as it is when it is plain, else in single quotes.
    static func shellWord(_ name: String) -> String {
        let plain = !name.isEmpty && name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) }
        return plain ? name : "'" + name.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
