import RChatCore

/// What the composer's row asks or shows instead of the composer, taking every key until it
/// is answered: the draft underneath stays as it was.
public enum Prompt: Equatable, Sendable {
    /// `s` on an attachment: where to save a copy. `path` is edited like a message (Tab
    /// completes it); Enter saves, Esc cancels.
    case save(conversation: ConversationID, message: MessageID, path: Composer)
    /// `/voice`: recording for the conversation since `since` (unix seconds); Enter sends,
    /// Esc cancels.
    case recording(conversation: ConversationID, since: Int64)
}
