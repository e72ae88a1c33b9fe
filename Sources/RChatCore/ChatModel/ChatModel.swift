/// The seam between the view and the engine (as profanity's ui.h is between protocol and
/// view): the TUI reads these models and sends these intents; it never touches SQLite or
/// sockets. The engine implements it; tests implement it with a fake.
public protocol ChatModel: AnyObject {
    func conversations() -> [ConversationSummary]
    /// The latest `limit` items before `before` (an item index from the end; nil = newest),
    /// oldest first: a page, never the whole history.
    func page(of conversation: ConversationID, before: Int?, limit: Int) -> [ConversationItem]
    func itemCount(of conversation: ConversationID) -> Int
    func timeline(of conversation: ConversationID, message: MessageID) -> [TimelineEntry]
    func connection() -> ConnectionState
    /// The account's settings that change what the view shows.
    func viewSettings() -> ViewSettings
    /// Alerts that could not be shown while the view was away (the terminal the linger
    /// would have written to was gone), one line each, oldest first; taken once.
    func takeOwedAlerts() -> [String]
    /// A conversation another process asked the view to open (an alert was clicked); taken once.
    func takeOpenRequest() -> ConversationID?
    /// The conversation that was open when the view last quit (weechat, gurk and iamb
    /// reopen it); nil: none, or it was closed.
    var lastOpenConversation: ConversationID? { get }
    /// Remembers what is open now, for the next start; a failed write only loses that.
    func rememberOpenConversation(_ conversation: ConversationID?)
    func myCode() -> String
    /// `/search WORDS`: the newest messages whose text has every word (at most
    /// `SearchQuery.resultLimit`), newest first; in one conversation, or in all (nil).
    func search(_ query: SearchQuery, in conversation: ConversationID?) throws(ChatModelError) -> [SearchHit]

    /// Intents. Errors come back as one line for the status bar.
    func send(to conversation: ConversationID, content: MessageContent) throws(ChatModelError)
    func resend(in conversation: ConversationID, messages: [MessageID]) throws(ChatModelError)
    /// A reaction, an edit or a delete for everyone on a message of the conversation (`e`,
    /// `d`, `+`, `/react` in the view), each an item of its own; refused in one line as the
    /// commands refuse it.
    func act(in conversation: ConversationID, _ action: MessageAction) throws(ChatModelError)
    /// `/file PATH`, `/photo PATH`, a recorded voice message: the file is read once and sent as
    /// an attachment (`kind` nil: photo when the image decoders read it, else file). Bad input
    /// (missing, a directory, unreadable, empty, over `max-attachment-mb`) is one line, and
    /// nothing is stored. Returns the new message's id.
    @discardableResult
    func sendFile(to conversation: ConversationID, path: String, as kind: AttachmentKind?) throws(ChatModelError) -> MessageID
    /// Copies a complete attachment (sent or received) to `path` (a file that does not exist
    /// yet, or a directory to put it in under its name); returns the path written.
    func saveAttachment(in conversation: ConversationID, message: MessageID, to path: String) throws(ChatModelError) -> String
    /// `/timer 1h`: sets the conversation's disappearing-message timer for both sides (it
    /// travels as a control item, with a row on each side).
    func setTimer(_ timer: DisappearingTimer, for conversation: ConversationID) throws(ChatModelError)
    /// The messages have been on screen: Read receipts may go.
    func markShown(in conversation: ConversationID, messages: [MessageID])
    /// Returns the conversation the code opened (new, or the contact already known).
    func addContact(code: String) throws(ChatModelError) -> ConversationID
    /// A new display name; the conversation, its items and its id stay.
    func rename(_ conversation: ConversationID, to name: String) throws(ChatModelError)
    func setMuted(_ conversation: ConversationID, _ muted: Bool) throws(ChatModelError)
    /// `/members` in a group: this side first, then each member as its log made them.
    func groupMembers(of conversation: ConversationID) throws(ChatModelError) -> [GroupMemberLine]
    /// `/add NAME…`, `/remove NAME`, `/leave` in a group: a change of its signed log.
    func changeGroup(_ conversation: ConversationID, _ change: GroupChange) throws(ChatModelError)
    func setBlocked(_ conversation: ConversationID, _ blocked: Bool) throws(ChatModelError)
    func delete(_ conversation: ConversationID) throws(ChatModelError)
    /// `a` on a message request: pins the keys its signed code carried (not checked in
    /// person). With `replacing`, that conversation takes them instead and the request's
    /// messages join it (`ConversationSummary.namesake`). Returns the conversation that goes on.
    func acceptRequest(_ request: ConversationID, replacing: ConversationID?) throws(ChatModelError) -> ConversationID
    /// `d` on a message request: deleted with its messages; later requests from its keys are dropped.
    func declineRequest(_ request: ConversationID) throws(ChatModelError)
    /// `/safety`: the number `rchat add` and `rchat safety` print for this contact.
    func safetyNumber(of conversation: ConversationID) throws(ChatModelError) -> String
    /// The draft kept for the conversation (typed, not sent), or nil. A failure to read it
    /// is an error, never "no draft": the view must not write over what it could not read.
    func draft(of conversation: ConversationID) throws(ChatModelError) -> Draft?
    /// Keeps the conversation's draft across restarts; nil removes it.
    func setDraft(_ draft: Draft?, for conversation: ConversationID) throws(ChatModelError)
    /// `/reconnect`: relays that are offline are tried now, not at their retry time.
    func reconnect()

    /// Whether the user has answered "Show desktop alerts?" (asked once, the first time a
    /// conversation is opened; `rchat settings desktop-alerts on|off` changes it later).
    var alertPermissionAsked: Bool { get }
    /// The answer, remembered by the store: desktop alerts allowed or refused.
    func setAlertPermission(_ allowed: Bool)
    /// Desktop alerts for messages that arrived while the view runs (`alerts-while-open`), by
    /// the policy of every alert: recorded, so never twice; never for `onScreen`.
    func alertOnDesktop(_ arrivals: [(conversation: ConversationID, id: MessageID)], onScreen: ConversationID?)

    /// A descriptor that becomes readable when something changed; `drainEvents` empties it
    /// and says what changed, so the view redraws only that.
    var wakeDescriptor: Int32 { get }
    func drainEvents() -> [ChatEvent]
}

public struct ChatModelError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public enum ConnectionState: Equatable, Sendable {
    case connecting
    case online
    case offline(retryIn: Int)
    /// Connected, but the relay left an acknowledgement overdue (the engine's acknowledgement
    /// timeout): it may be frozen. Cleared (`.online`) when its answers flow again.
    case stalled
    /// The engine stopped for good (the disk failed under it, say): nothing is sent or
    /// received until the view is started again. `reason` is one sentence.
    case stopped(reason: String)
}

/// One member of a group as `/members` lists it.
public struct GroupMemberLine: Equatable, Sendable {
    public var name: String
    public var isAdmin: Bool
    /// "current", "left" or "removed".
    public var state: String
    /// Who vouches for their keys: nil for checked in person, else the admin who added them.
    public var addedBy: String?
    public var isSelf: Bool

    public init(name: String, isAdmin: Bool, state: String, addedBy: String?, isSelf: Bool) {
        self.name = name; self.isAdmin = isAdmin; self.state = state; self.addedBy = addedBy; self.isSelf = isSelf
    }
}

/// A change of a group the view asks for (renaming goes through `rename`).
public enum GroupChange: Equatable, Sendable {
    case add([String])
    case remove(String)
    case leave
}

/// What changed, so the view redraws only that.
public enum ChatEvent: Equatable, Sendable {
    case conversationsChanged
    /// A message stored. `author`: in a group, who wrote it (nil for a change of its
    /// membership, which is a row of the group and alerts nobody).
    /// `reaction`: the emoji of a reaction to this side's own message (which alerts as one:
    /// "Reacted 👍", or "New reaction"); nil for a message.
    case newMessage(conversation: ConversationID, id: MessageID, preview: String, author: String? = nil, reaction: String? = nil)
    case statusChanged(conversation: ConversationID, id: MessageID, status: MessageStatus)
    /// An attachment's file moved (chunks taken by the relay or stored here), or became
    /// whole or was discarded: its `transfer` is read again.
    case transferMoved(conversation: ConversationID, id: MessageID)
    /// Messages of the conversation were deleted (their disappearing timer ran out): the
    /// view drops them, keeping its selection and scroll position on what remains.
    case itemsRemoved(conversation: ConversationID, ids: [MessageID])
    /// A row was added to the conversation (or one went: "Sam is using a new device…" once
    /// their code is entered again), or what a message shows changed (its reactions): the
    /// view fetches what it shows again.
    case rowAdded(conversation: ConversationID)
    case connectionChanged(ConnectionState)
    /// A command run beside the view changed the store (`rchat send`, `add`, `block`,
    /// `rename`, `settings`…): the list, the open conversation and the settings are read again.
    case changedElsewhere
}

/// What the view asks of a message besides Resend (issue 31): each an action of its own.
public enum MessageAction: Equatable, Sendable {
    /// nil: take this side's reaction back.
    case react(MessageID, emoji: String?)
    case edit(MessageID, text: String)
    case unsend(MessageID)
}
