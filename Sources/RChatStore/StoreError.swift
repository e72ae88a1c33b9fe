import RChatCore

/// What the store refuses, in words a user can act on (one line each).
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file is not a database, is damaged, or is some other program's database.
    case unreadable(path: String, reason: String)
    /// The file could not be opened or created (missing directory, permissions).
    case cannotOpen(path: String, reason: String)
    /// Written by a newer rChat: opening it here would mean a downgrade.
    case newerSchema(path: String, found: Int, known: Int)
    /// The file system would not take the write-ahead log (needed for crash safety).
    case walUnavailable(path: String, journalMode: String)
    case contactNameTaken(String)
    case unknownContact(ContactID)
    case unknownConversation(ConversationID)
    /// A schema step could not be applied (a row the new schema refuses, a full disk): the
    /// file stays at version `left`, as it was.
    case migrationFailed(path: String, version: Int, left: Int, reason: String)
    case unknownMessage(MessageRowID)
    case duplicateMessage(MessageID)
    /// A stored value this code cannot read (a damaged or hand-edited file).
    case malformedValue(table: String, column: String, detail: String)
    /// A stored message content that does not decode (a damaged or hand-edited file).
    case malformedContent(table: String, column: String, MessageContentError)
    /// The disk did not confirm a write (fdatasync failed): nothing may be acknowledged.
    case cannotSync(path: String, reason: String)
    /// A draft longer than the store keeps (`Draft.maximumBytes`).
    case draftTooLong(bytes: Int, maximum: Int)
    /// A group whose log this side holds already.
    case groupExists

    public var description: String {
        switch self {
        case let .unreadable(path, reason):
            return "\(path) is not a readable rChat database (\(reason)); it was left unchanged: restore a copy of it, "
                + "or restore your account export into a new home with `rchat init --import FILE`"
        case let .cannotOpen(path, reason):
            return "cannot open \(path): \(reason)"
        case let .newerSchema(path, found, known):
            return "\(path) was written by a newer rChat (schema version \(found), this one knows up to \(known)); use the newer rChat"
        case let .walUnavailable(path, mode):
            return "\(path): the file system refused write-ahead logging (journal mode stays \(mode))"
        case let .contactNameTaken(name):
            return "a contact named \(name) already exists"
        case let .unknownContact(id):
            return "no such contact (\(id))"
        case let .unknownConversation(id):
            return "no such conversation (\(id))"
        case let .migrationFailed(path, version, left, reason):
            return "\(path): could not bring the data to schema version \(version), so it was left at version \(left), "
                + "unchanged: \(reason)"
        case let .unknownMessage(id):
            return "no such message (\(id))"
        case let .duplicateMessage(id):
            return "a message with id \(id.hex) is already stored for this contact"
        case let .malformedValue(table, column, detail):
            return "the database holds a value rChat cannot read in \(table).\(column): \(detail)"
        case let .malformedContent(table, column, cause):
            return "the database holds a value rChat cannot read in \(table).\(column): \(cause)"
        case let .cannotSync(path, reason):
            return "cannot make \(path) durable: \(reason)"
        case let .draftTooLong(bytes, maximum):
            return "the draft is \(bytes) bytes, more than the \(maximum) kept; shorten it or send it in parts"
        case .groupExists:
            return "this group is already here"
        }
    }
}
