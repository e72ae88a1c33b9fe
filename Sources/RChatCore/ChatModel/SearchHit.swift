/// A message a search found: where it is and a piece of its text around the words.
public struct SearchHit: Equatable, Sendable {
    public var conversation: ConversationID
    public var message: MessageID
    public var direction: Direction
    /// As `MessageItem.at`: when it was written (outgoing) or sent (incoming), unix seconds.
    public var at: Int64
    /// Words around the match, on one line (line breaks become spaces), `…` where cut.
    /// Display text: other people chose it.
    public var snippet: String
    /// Its place in the conversation as `ChatModel.page(of:before:limit:)` counts items
    /// (messages and system rows, 0 = oldest): the view jumps there.
    public var index: Int
    /// In a group: who wrote an incoming message (nil in a one-to-one conversation: its contact).
    public var author: String?

    public init(conversation: ConversationID, message: MessageID, direction: Direction, at: Int64, snippet: String, index: Int) {
        self.conversation = conversation; self.message = message; self.direction = direction
        self.at = at; self.snippet = snippet; self.index = index
    }
}
