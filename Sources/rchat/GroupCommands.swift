import RChatCore
import RChatEngine

/// `rchat group …`: groups (DESIGN.md §16), their membership as the signed log makes it.
enum GroupCommands {
    static let command = Command(
        name: "group",
        usage: """
        rchat group create GROUP MEMBER... | add GROUP MEMBER... | remove GROUP MEMBER | leave GROUP | rename GROUP NEW | members GROUP [--json]
        """,
        summary: "Make a group of contacts, change who is in it, or list its members.",
        details: """
        create: GROUP is its name (the rules of `rchat add --name`); each MEMBER is a contact's
        name. You are its first admin. Each member gets the codes you entered for the others,
        so those who do not know each other meet through you ("added by" you until they enter
        each other's codes).
        add, remove, rename: an admin's (the creator is the first); leave: anyone's. Every
        member applies every change by the same rule, so all end with the same members.
        A member removed gets the removal, then nothing more; one added gets what is written
        from then on.
        members: one line per member, you first. --json prints one object per line:
        {"name":"…","role":"admin"|"member","state":"current"|"left"|"removed","verified":"in person"|"by NAME"}
        """,
        options: [.flag("--json", help: "one JSON object per line (members)")]
    ) { args, locations in
        let word = try args.positional(0, "what to do (create, add, remove, leave, rename or members)")
        let account = try AccountService(locations: locations)
        switch word {
        case "create":
            let name = try args.positional(1, "GROUP")
            guard args.positionals.count > 2 else { throw Arguments.UsageError(description: "missing MEMBER (a contact's name)") }
            let group = try account.createGroup(name: name, members: Array(args.positionals.dropFirst(2)))
            let count = args.positionals.count - 1
            say("created \(TerminalText.sanitized(group.name, breaks: .shown)) with \(count) members, you included")
        case "add":
            let group = try account.group(named: try args.positional(1, "GROUP"))
            try account.addMembers(group, Array(args.positionals.dropFirst(2)))
            say("added \(args.positionals.count - 2) to \(TerminalText.sanitized(group.name, breaks: .shown))")
        case "remove":
            try args.expectPositionals(max: 3)
            let group = try account.group(named: try args.positional(1, "GROUP"))
            let member = try args.positional(2, "MEMBER")
            try account.removeMember(group, member)
            say("removed \(TerminalText.sanitized(member, breaks: .shown)) from \(TerminalText.sanitized(group.name, breaks: .shown))")
        case "leave":
            try args.expectPositionals(max: 2)
            let group = try account.group(named: try args.positional(1, "GROUP"))
            try account.leaveGroup(group)
            say("left \(TerminalText.sanitized(group.name, breaks: .shown))")
        case "rename":
            try args.expectPositionals(max: 3)
            let group = try account.group(named: try args.positional(1, "GROUP"))
            let new = try args.positional(2, "NEW")
            try account.renameGroup(group, to: new)
            say("renamed \(TerminalText.sanitized(group.name, breaks: .shown)) to \(TerminalText.sanitized(new, breaks: .shown))")
        case "members":
            try args.expectPositionals(max: 2)
            let group = try account.group(named: try args.positional(1, "GROUP"))
            let members = try account.groupMembers(group)
            if args.has("--json") {
                for m in members {
                    say(JSONLine.object([("name", .string(m.name)), ("role", .string(m.isAdmin ? "admin" : "member")),
                                         ("state", .string(m.state)), ("verified", .string(m.addedBy.map { "by \($0)" } ?? "in person"))]))
                }
            } else {
                let names = members.map { TerminalText.sanitized($0.name, breaks: .shown) + ($0.isSelf ? " (you)" : "") }
                let width = names.map { TextWidth.columns(of: $0) }.max() ?? 0
                for (m, name) in zip(members, names) {
                    var line = TextWidth.padded(name, to: width + 2) + (m.isAdmin ? "admin" : "member")
                    if m.state != "current" { line += "  \(m.state)" }
                    if let by = m.addedBy { line += "  added by \(TerminalText.sanitized(by, breaks: .shown))" }
                    say(line)
                }
            }
        default:
            throw Arguments.UsageError(description: "unknown group command \"\(word)\" (create, add, remove, leave, rename or members)")
        }
    }
}
