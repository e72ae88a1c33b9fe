/// Why a file being sent is not going to the relay now, as its line says: the relay
/// refused part of it for the recipient's quota and it goes again when room frees (the
/// recipient takes what is held, or a backoff passes), or nothing of it can go until the
/// contact is back (no session to send it in).
public enum UploadWait: String, Equatable, Sendable, CaseIterable {
    /// "waiting for room at the relay"
    case room
    /// "waiting for Sam to come back"
    case contact

    /// The words on the file's line (`rchat list`, the view), with the contact's name as
    /// display text (the caller makes it safe for the terminal).
    public func words(contact name: String) -> String {
        switch self {
        case .room: "waiting for room at the relay"
        case .contact: "waiting for \(name) to come back"
        }
    }

    /// The sender's way to the contact, as far as a file being sent is concerned.
    public enum Route: Equatable, Sendable, CaseIterable {
        /// Not connected to the conversation's relay: the connection's own line says so.
        case offline
        /// Connected, but no session carries frames to the contact: one starts only when
        /// the contact is online too (a new run never sends under an earlier run's session).
        case noSession
        /// The session is with a device the user has not verified: nothing goes to it
        /// until they do, and the conversation's own row says why.
        case unverifiedDevice
        /// A session carries frames: the relay holds them for the contact while away.
        case session
    }

    /// The reason a file waits, or nil while it moves (or nothing of it is left to go):
    /// `allTaken`, the relay took the item and every chunk; `refusedForRoom`, the relay
    /// refused part of it for the recipient's quota (`--quota`, `--quota-bytes`) and that
    /// part has not been tried again since.
    public static func reason(allTaken: Bool, route: Route, refusedForRoom: Bool) -> UploadWait? {
        guard !allTaken else { return nil }
        switch route {
        case .offline, .unverifiedDevice: return nil
        case .noSession: return .contact
        case .session: return refusedForRoom ? .room : nil
        }
    }
}
