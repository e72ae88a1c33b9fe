import RChatCore
import RChatStore

/// Disappearing messages (docs/ARCHITECTURE.md, "Disappearing messages").
extension AccountService {
    /// Sets the conversation's timer on both sides: written here at once, and sent as a
    /// control item with its own id and status. Returns that item's id.
    public func setTimer(_ timer: DisappearingTimer, for contact: Contact) throws(EngineError) -> MessageID {
        throw .usage("disappearing messages are not built yet")
    }
}
