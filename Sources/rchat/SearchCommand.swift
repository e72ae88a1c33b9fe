import RChatCommandLine
import RChatCore
import RChatEngine

enum SearchCommand {
    static let all = Option.flag("--all", help: "search every conversation (then every word is a word to find)")

    static let command = Command(
        name: "search", usage: "rchat search NAME|--all WORDS... [--json]",
        summary: "Find messages with every word, in one conversation or in all, newest first.",
        details: """
        Each word matches the start of a word in a message (case and accents do not matter);
        quotes, *, - and other punctuation are only characters, never search syntax. At most
        \(SearchQuery.resultLimit) messages, the newest first. A word starting with - goes after --.
        Each line: the conversation, the local time, who wrote it, and the text around the words.
        --json prints one object per line:
        {"conversation":"<name>","id":"<hex>","direction":"out"|"in","at":<unix>,"index":<n>,"snippet":"…"}
        (index: the message's place in its conversation, 0 = the oldest item).
        """,
        options: [all, .flag("--json", help: "one JSON object per line")]
    ) { args, locations in
        let account = try AccountService(locations: locations)
        var words = args.positionals[...]
        var conversation: ConversationID?
        if !args.has(all) {
            let name = try args.positional(0, "NAME (or --all)")
            conversation = try account.groupIfNoContact(named: name)?.conversation ?? account.contact(named: name).id.conversation
            words = words.dropFirst()
        }
        let query: SearchQuery
        do { query = try SearchQuery(words.joined(separator: " ")) } catch {
            throw Arguments.UsageError(description: "\(error)")
        }
        let hits = try account.search(query, in: conversation)
        let names = Dictionary(try account.conversationSummaries().map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        for hit in hits {
            let name = names[hit.conversation] ?? "?"
            if args.has("--json") {
                say(JSONLine.object([
                    ("conversation", .string(name)), ("id", .string(hit.message.hex)), ("direction", .string(hit.direction.rawValue)),
                    ("at", .int(hit.at)), ("index", .int(hit.index)), ("snippet", .string(hit.snippet)),
                ] + (hit.author.map { [("from", JSONLine.Value.string($0))] } ?? [])))
            } else {
                let shown = TerminalText.sanitized(name, breaks: .shown)
                let who = hit.direction == .outgoing ? "You" : hit.author.map { TerminalText.sanitized($0, breaks: .shown) } ?? shown
                say("\(shown)  \(ConversationText.localTime(hit.at))  \(who): \(TerminalText.sanitized(hit.snippet, breaks: .shown))")
            }
        }
        if hits.isEmpty && !args.has("--json") { say("no message has: \(TerminalText.sanitized(query.description, breaks: .shown))") }
    }
}
