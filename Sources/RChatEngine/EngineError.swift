/// What the engine reports to a command or the TUI: one clear line each, no secrets.
public enum EngineError: Error, Equatable, CustomStringConvertible {
    /// The user asked for something wrong (exit 2 from a command).
    case usage(String)
    /// Something failed at run time (exit 1).
    case io(String)
    case noAccount(String)
    case accountExists(String)
    case deviceKey(String)
    case store(String)
    /// The account's data is damaged (the database, a sealed row): the command stops and
    /// writes nothing more.
    case damaged(String)
    case crypto(String)
    case refused(String)

    public var description: String {
        switch self {
        case .usage(let m), .io(let m), .deviceKey(let m), .store(let m), .damaged(let m), .crypto(let m), .refused(let m): return m
        case .noAccount(let home): return "no account in \(home) (create one with: rchat init --name NAME --relay ADDRESS)"
        case .accountExists(let home): return "an account already exists in \(home); nothing was changed"
        }
    }

    /// Usage errors exit 2; everything else exits 1.
    public var isUsage: Bool {
        if case .usage = self { return true }
        return false
    }
}
