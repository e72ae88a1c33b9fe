import RChatCore
import RChatStore

/// Attachments: sending a file, saving one out (docs/ARCHITECTURE.md, "Content").
extension AccountService {
    /// Reads the file at `path` once and queues it as an attachment to `contact`.
    public func sendFile(to contact: Contact, path: String, as kind: AttachmentKind?) throws(EngineError) -> MessageID {
        throw .usage("sending files is not built yet")
    }

    /// Copies a complete attachment to `path`; returns the path written.
    public func saveAttachment(_ contact: Contact, id: MessageID, to path: String) throws(EngineError) -> String {
        throw .usage("saving files is not built yet")
    }
}
