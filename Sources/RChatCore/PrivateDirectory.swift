/// What rChat does with a home or device directory before using it (README, "Where things
/// are kept"): its own and closed to others, it is used; its own but open to others (a
/// group or other bit set, 0777 included), it is tightened to 0700 first — the user's own
/// directory, only too loose; another user's (or not a directory), it is refused: whoever
/// owns it can plant links or read what is written there, and changing it is not ours.
public enum PrivateDirectory: Equatable, Sendable {
    case isPrivate
    case tighten(from: UInt32)
    case ownedByAnother(owner: UInt32)
    case notADirectory

    /// `mode` is the full `st_mode` (type and permission bits); `user` the effective uid.
    public static func judge(mode: UInt32, owner: UInt32, user: UInt32) -> PrivateDirectory {
        guard mode & 0o170000 == 0o040000 else { return .notADirectory }
        guard owner == user else { return .ownedByAnother(owner: owner) }
        return mode & 0o077 == 0 ? .isPrivate : .tighten(from: mode & 0o7777)
    }
}
