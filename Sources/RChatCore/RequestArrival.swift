/// What a message request does when it arrives at its recipient's engine: a pure decision
/// over what is known of its sender's account key and of the name its signed code uses.
/// Only a handshake that proves other keys brings Keys don't match: a request never does,
/// whatever name it uses.
public enum RequestArrival: Equatable, Sendable {
    /// Who has the request's account key here.
    public enum Sender: Equatable, Sendable {
        /// Nobody: a stranger.
        case stranger
        /// A contact or an earlier request from the same key; `gone`: blocked or deleted.
        case known(isRequest: Bool, gone: Bool)
    }

    /// Who has the name the request's code uses (looked at only for a stranger).
    public enum Namesake: Equatable, Sendable {
        /// Nobody, or a request, or a deleted contact.
        case none
        /// A contact; `told`: its conversation already has the row about this key.
        case contact(told: Bool)
    }

    /// Dropped without a trace: it neither brings a blocked or deleted contact back nor alerts.
    case dropped
    /// A timer change from someone who is not a contact yet: no request, no row.
    case ignored
    /// Their message, in the conversation with that key.
    case message
    /// A new request of its own; `rowForNamesake`: the contact whose name it uses gets the row
    /// saying so (once per requester's key), and nothing else of that conversation changes.
    case newRequest(rowForNamesake: Bool)

    public static func of(_ sender: Sender, isControl: Bool, namesake: Namesake) -> RequestArrival {
        switch sender {
        case .known(_, gone: true): return .dropped
        case .known(isRequest: true, _) where isControl: return .ignored
        case .known: return .message
        case .stranger where isControl: return .ignored
        case .stranger: return .newRequest(rowForNamesake: namesake == .contact(told: false))
        }
    }
}
