/// What a conversation shows, in order: messages and system rows.
/// The engine produces these read models; the TUI and `rchat list` only draw them.
public enum ConversationItem: Equatable, Sendable {
    case message(MessageItem)
    case row(SystemRow)

    /// Resend has something to send here: an outgoing message that may not have arrived or
    /// that rChat holds back (`waiting`), or a row that still offers Resend for its messages.
    public var offersResend: Bool {
        switch self {
        case .message(let m):
            m.direction == .outgoing && (m.status?.offersResend == true || m.waiting != nil || m.pendingAction?.status.offersResend == true)
        case .row(let r): r.action == .resend && !r.messageIDs.isEmpty
        }
    }
}

public enum Direction: String, Sendable {
    case outgoing = "out"
    case incoming = "in"
}

public struct MessageItem: Equatable, Sendable, Identifiable {
    public var id: MessageID
    public var direction: Direction
    public var content: MessageContent
    /// nil for incoming messages.
    public var status: MessageStatus?
    /// Sent again automatically (the quiet `Resent` marker).
    public var resent: Bool
    /// When it was written (outgoing) or stored here (incoming), unix seconds.
    public var at: Int64
    /// For an attachment: how far its file has moved on this device; nil for anything else.
    public var transfer: AttachmentTransfer?
    /// When it disappears (unix seconds): its disappearing timer's clock started; nil: it does not, or not yet.
    public var expiresAt: Int64?
    /// The contact's name, for a row that names them ("Sam set disappearing messages…").
    public var peerName: String?
    /// Outgoing and still queued: what rChat holds it back for (`SendPolicy`); nil: it goes
    /// as soon as it can.
    public var waiting: SendPolicy.Hold?
    /// In a group: who wrote an incoming message.
    public var author: String?
    /// In a group: an outgoing message's delivery to each member it was written to (what
    /// it shows, `status`, is the lowest over the current ones: `DeliverySummary`).
    public var deliveries: [MemberDelivery]?

    /// A reply: the message it quotes, as this side holds it.
    public var quote: Quote?
    /// Who reacted to it with what, each person's latest (`ReactionPolicy`), in the order
    /// of the summary: most reacted first.
    public var reactions: [Reaction] = []
    /// Edited (`rchat edit`): each version of its text, the original first, each with its
    /// time (written here, or held by the relay); empty when it never was.
    public var versions: [Version] = []
    /// This side's own latest edit, or its delete for everyone, while it is not Delivered to
    /// everyone: which, and its status ("edit Sending").
    public var pendingAction: PendingAction?

    public var isEdited: Bool { versions.count > 1 }
    /// Deleted for everyone: nothing of it is left but its place.
    public var isUnsent: Bool { content == .unsent }

    public struct Version: Equatable, Sendable {
        public let text: String
        public let at: Int64
        public init(text: String, at: Int64) { self.text = text; self.at = at }
    }

    public struct PendingAction: Equatable, Sendable {
        public enum Kind: String, Sendable { case edit, delete }
        public let kind: Kind
        public let status: MessageStatus
        /// The edit's or the delete's own id (what Resend sends again).
        public let id: MessageID
        public init(kind: Kind, status: MessageStatus, id: MessageID) { self.kind = kind; self.status = status; self.id = id }
        /// "edit Sending", "delete Not delivered".
        public var words: String { "\(kind.rawValue) \(status.rawValue)" }
    }

    public struct Reaction: Equatable, Sendable {
        public let from: String
        public let emoji: String
        /// This side's own reaction: its item's status (what it shows, over the members).
        public let status: MessageStatus?
        public init(from: String, emoji: String, status: MessageStatus? = nil) {
            self.from = from; self.emoji = emoji; self.status = status
        }
    }

    /// "👍 2  ❤️ 1": the reactions as a line under the message shows them.
    public var reactionSummary: String {
        var counts: [(emoji: String, count: Int)] = []
        for r in reactions {
            if let i = counts.firstIndex(where: { $0.emoji == r.emoji }) { counts[i].count += 1 } else { counts.append((r.emoji, 1)) }
        }
        return ReactionPolicy.words(counts)
    }

    /// What a reply's one-line quote shows: who wrote the quoted message and its text (the
    /// line a conversation shows for it, for a file), or that this side does not have it —
    /// never had it, or had it and it was deleted (its timer ran out).
    public enum Quote: Equatable, Sendable {
        case message(author: String, text: String)
        case notFound
        case deleted

        /// The quote in words, on one line: "Alice: Are we still on…", or why there is none.
        public var words: String {
            switch self {
            case .message(let author, let text): "\(author): \(text.split(whereSeparator: \.isNewline).joined(separator: " "))"
            case .notFound: Reply.notFound
            case .deleted: Reply.deleted
            }
        }
    }

    public struct MemberDelivery: Equatable, Sendable {
        public let member: String
        public let status: MessageStatus
        /// The member is still in the group (counted in what the message shows).
        public let isCurrent: Bool
        public init(member: String, status: MessageStatus, isCurrent: Bool = true) {
            self.member = member; self.status = status; self.isCurrent = isCurrent
        }
    }

    public init(id: MessageID, direction: Direction, content: MessageContent, status: MessageStatus?, resent: Bool, at: Int64,
                transfer: AttachmentTransfer? = nil) {
        self.id = id; self.direction = direction; self.content = content; self.status = status; self.resent = resent; self.at = at
        self.transfer = transfer
    }

    /// A text message.
    public init(id: MessageID, direction: Direction, text: String, status: MessageStatus?, resent: Bool, at: Int64) {
        self.init(id: id, direction: direction, content: .text(text), status: status, resent: resent, at: at)
    }

    /// What the view and `rchat list` show: the text, or the one line for an item this
    /// version cannot show (`MessageContent.displayText`).
    public var text: String { content.displayText(direction: direction, peer: peerName ?? "They") }

    /// What it waits for, in words ("waiting for you to verify Sam's new device"); nil: nothing.
    public var waitingText: String? { waiting.map { SendPolicy.words($0, name: peerName ?? "They") } }

    /// Shown as a one-line row rather than as a message someone wrote: what is not text.
    public var showsAsRow: Bool {
        if case .control = content { return true }
        return false
    }
}

/// An attachment's file as this device holds it.
public enum AttachmentTransfer: Equatable, Sendable {
    /// Moving: outgoing, `done` plaintext bytes of it taken by the relay; incoming, `done`
    /// bytes written here (fsynced). `done` < the attachment's size. `waiting`: outgoing,
    /// what it waits for while it does not move (`UploadWait`).
    case moving(done: UInt64, waiting: UploadWait? = nil)
    /// Whole on this device: the file in the account home (0600), the sent copy for an
    /// outgoing one; for an incoming one stored and its hash checked.
    case complete(path: String)
    /// Incoming only: never whole here (its hash did not match, or it was cut short), with
    /// why in words. Nothing of it is kept.
    case discarded(reason: String)

    /// Bytes done out of `size`: a complete file counts whole, a discarded one as nothing.
    public func done(of size: UInt64) -> UInt64 {
        switch self {
        case .moving(let done, _): return min(done, size)
        case .complete: return size
        case .discarded: return 0
        }
    }
}

/// A line the conversation shows that is not a message: the recovery rows, with their
/// Resend action where the seeds offer one.
public struct SystemRow: Equatable, Sendable, Identifiable {
    public enum Action: String, Sendable { case resend }

    public var id: Int64
    public var text: String
    public var action: Action?
    public var messageIDs: [MessageID]
    public var at: Int64

    public init(id: Int64, text: String, action: Action?, messageIDs: [MessageID], at: Int64) {
        self.id = id; self.text = text; self.action = action; self.messageIDs = messageIDs; self.at = at
    }
}

/// One line of the conversation list.
public struct ConversationSummary: Equatable, Sendable {
    public enum State: String, Sendable {
        case ok
        case keysDontMatch = "keys-dont-match"
        case blocked, muted, request
    }

    public var id: ConversationID
    /// Display text only: two conversations may have names that differ only in case or
    /// width, and a rename keeps the id.
    public var name: String
    public var state: State
    public var unread: Int
    public var lastActivity: Int64
    /// The conversation's disappearing-message timer (`.off`: none).
    public var timer: DisappearingTimer
    /// For a message request from someone using a contact's name with other keys: that
    /// contact's conversation, which accepting may re-pin to the request's keys.
    public var namesake: ConversationID?
    /// A group's: how many are in it now, this side included; nil for a contact.
    public var members: Int?

    public init(id: ConversationID, name: String, state: State, unread: Int, lastActivity: Int64, timer: DisappearingTimer = .off) {
        self.id = id; self.name = name; self.state = state; self.unread = unread; self.lastActivity = lastActivity
        self.timer = timer
    }
}

/// One status a message reached, with its time: the message details' timeline.
public struct TimelineEntry: Equatable, Sendable {
    public enum Step: Equatable, Sendable {
        case stored, relayAcknowledged, delivered, read, resent, status(MessageStatus)
    }
    public var step: Step
    public var at: Int64
    /// In a group: the member whose delivery this step is of (each member has its own
    /// timeline); nil in a one-to-one conversation.
    public var member: String?

    public init(step: Step, at: Int64, member: String? = nil) { self.step = step; self.at = at; self.member = member }
}
