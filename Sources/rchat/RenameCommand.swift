import RChatCore
import RChatEngine

enum RenameCommand {
    static let command = Command(
        name: "rename", usage: "rchat rename NAME NEW",
        summary: "Give a contact a new name; the conversation, its messages and an open view stay.",
        details: """
        NAME picks the contact as every command does (case does not matter). NEW follows the
        rules of `rchat add --name` and may not be another contact's name.
        """
    ) { args, locations in
        try args.expectPositionals(max: 2)
        let name = try args.positional(0, "NAME")
        let new = try args.positional(1, "NEW")
        let account = try AccountService(locations: locations)
        let contact = try account.contact(named: name)
        try account.rename(contact.id.conversation, to: new)
        say("renamed \(TerminalText.sanitized(contact.name, breaks: .shown)) to \(TerminalText.sanitized(new, breaks: .shown))")
    }
}
