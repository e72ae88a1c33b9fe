import RChatSQL
import RChatStore

/// What the engine reports to a command or the TUI: one clear line each, no secrets. A
/// failure underneath keeps its own error (`StoreError`, `DatabaseError`), not its text.
public enum EngineError: Error, Equatable, CustomStringConvertible {
    /// The user asked for something wrong (exit 2 from a command).
    case usage(String)
    /// Something failed at run time (exit 1).
    case io(String)
    case noAccount(String)
    case accountExists(String)
    case deviceKey(String)
    /// The store refused or failed.
    case store(StoreError)
    /// SQLite failed (the statement is in the error).
    case database(DatabaseError)
    /// The account row holds a secret or value that does not open or parse.
    case accountRecord(String)
    /// The account's data is damaged (the database, a sealed row): the command stops and
    /// writes nothing more.
    case damaged(Damage)
    case crypto(String)
    case refused(String)

    /// What is damaged, with the error that found it.
    public enum Damage: Equatable, Sendable, CustomStringConvertible {
        /// The file, as the store found it (`StoreError.unreadable`).
        case file(StoreError)
        /// SQLite found the file malformed while running a statement.
        case database(DatabaseError)
        /// A conversation's saved session that does not open with this device's key.
        case savedSession(contact: String, path: String)

        public var description: String {
            switch self {
            case .file(let error):
                return error.description
            case .database(let error):
                return StoreError.unreadable(path: Store.fileName, reason: "damaged: \(error.message)").description
            case let .savedSession(contact, path):
                return "the saved session with \(contact) in \(path) is damaged (it does not open with this device's key); "
                    + "it was left unchanged: enter \(contact)'s code again (rchat add CODE) to start a new session with them"
            }
        }
    }

    public var description: String {
        switch self {
        case .usage(let m), .io(let m), .deviceKey(let m), .accountRecord(let m), .crypto(let m), .refused(let m): return m
        case .store(let error): return error.description
        case .database(let error): return error.description
        case .damaged(let damage): return damage.description
        case .noAccount(let home): return "no account in \(home) (create one with: rchat init --name NAME --relay ADDRESS)"
        case .accountExists(let home): return "an account already exists in \(home); nothing was changed"
        }
    }

    /// A failure of the store or its disk (the batch was not committed): the engine stops,
    /// acknowledging nothing more, wherever it meets one.
    public var stopsTheEngine: Bool {
        switch self {
        case .store, .database, .damaged: return true
        default: return false
        }
    }

    /// Usage errors exit 2; everything else exits 1.
    public var isUsage: Bool {
        if case .usage = self { return true }
        return false
    }
}
