import Foundation
import RChatCore

/// Everything the screen shows, as values: the renderer turns it into a Screen without
/// asking the model anything.
public struct ViewState {
    public var rows: Int
    public var columns: Int
    public var glyphs: Glyphs
    /// The terminal draws Unicode (a UTF-8 locale): what other people wrote is drawn as
    /// written even when `glyphs` is ASCII (`glyphs ascii`).
    public var unicodeText = true
    public var timeZone: TimeZone
    public var now: Int64 = 0

    public var focus: Focus = .composer
    public var conversations: [ConversationSummary] = []
    public var listCursor = 0
    public var window: ConversationWindow?
    public var anchor: Anchor?
    /// Absolute index of the selected item in the open conversation.
    public var selected: Int?
    public var overlay: Overlay?
    public var banner: Banner?
    public var notice: Notice?
    public var composer = Composer()
    /// The open conversation's New line and what arrived below while scrolled up.
    public var unread = UnreadMarks()
    public var connection: ShownConnection = .connecting
    /// Whether the terminal window has focus, as focus reporting last said (a terminal that
    /// never reports counts as focused). While it has not, nothing drawn counts as read.
    public var terminalFocus: TerminalFocus = .focused
    /// How fast the open conversation's attachments move, as measured here.
    public var transfers = TransferRates()
    /// Previews of the photos that may be on screen, rendered off the frame's path.
    public var previews: [MessageID: ShownPreview] = [:]
    /// How long voice messages are, in seconds, once read from their files.
    public var durations: [MessageID: Double] = [:]
    /// A question on the composer's row (where to save a file) or a recording under way.
    public var prompt: Prompt?
    /// What the next message sent in its conversation answers (`q` on a message).
    public var replyingTo: ReplyDraft?
    /// The message `d` was pressed on once: a second `d` on it deletes it for everyone.
    public var confirmingDelete: MessageID?

    /// The reply being written in the open conversation, if any.
    public var openReply: ReplyDraft? {
        guard let reply = replyingTo, reply.conversation == openConversation else { return nil }
        return reply
    }

    public static let minimumRows = 10
    public static let minimumColumns = 40

    public var isTooSmall: Bool { rows < Self.minimumRows || columns < Self.minimumColumns }

    /// The open conversation, by id: a rename changes what the header says, not this.
    /// Not inlined: Swift 6.3.1's optimizer (CopyPropagation) crashes on callers that read it
    /// inlined from a class's stored `state` (ChatView.handle, openNextUnread).
    public var openConversation: ConversationID? {
        @inline(never) get { window?.conversation }
    }

    public var openSummary: ConversationSummary? {
        openConversation.flatMap(summary)
    }

    public func summary(_ id: ConversationID) -> ConversationSummary? {
        conversations.first { $0.id == id }
    }

    /// Unread messages everywhere except muted and blocked contacts: the badge and the
    /// terminal title (the list still shows every conversation's own count).
    public var unreadBadge: Int {
        conversations.filter(\.countsAsUnread).reduce(0) { $0 + $1.unread }
    }

    public var terminalTitle: String { unreadBadge > 0 ? "rChat (\(unreadBadge))" : "rChat" }
}

/// What the terminal last reported of its window's focus (`ESC [ I` / `ESC [ O`).
public enum TerminalFocus: Equatable, Sendable {
    case focused
    /// The user is in another window: the screen may not be seen.
    case lost
}

/// The relay connection as the status bar shows it. The engine says "offline, retrying in
/// N s" once; the view keeps the moment of the retry (on its own clock), so the countdown
/// needs no more from the engine.
public enum ShownConnection: Equatable, Sendable {
    case connecting
    case online
    /// Connected, but an acknowledgement is overdue: the relay may be frozen.
    case stalled
    /// `retryAt`: when the engine tries again, unix seconds; nil when it does not.
    case offline(retryAt: Int64?)
    /// The engine stopped for good; the view must be started again.
    case stopped(reason: String)

    /// The engine's `state`, told at `now`.
    public init(_ state: ConnectionState, at now: Int64) {
        switch state {
        case .connecting: self = .connecting
        case .online: self = .online
        case .stalled: self = .stalled
        case .offline(let retryIn): self = .offline(retryAt: retryIn > 0 ? now + Int64(retryIn) : nil)
        case .stopped(let reason): self = .stopped(reason: reason)
        }
    }

    /// Whole seconds left before the retry, while a countdown shows.
    func secondsToRetry(now: Int64) -> Int64? {
        guard case .offline(let retryAt?) = self, retryAt > now else { return nil }
        return retryAt - now
    }
}

extension ConversationSummary {
    /// Its unread messages count in the badge and the title, and Alt-A goes to it first:
    /// not muted, not blocked.
    var countsAsUnread: Bool { state != .muted && state != .blocked }
}

/// Where the open conversation's unread messages are, kept until it is left.
public struct UnreadMarks: Equatable, Sendable {
    /// Messages that arrived while the pane was scrolled up, not yet scrolled down to.
    public enum Below: Equatable, Sendable {
        case none
        /// `first`: the index of the first of them; `count`: how many.
        case arrived(first: Int, count: Int)
    }

    /// The item the "New" line is drawn above: the first message that was unread when the
    /// conversation was opened (nil: none was).
    public var newLine: Int?
    public var below: Below = .none

    public init(newLine: Int? = nil) { self.newLine = newLine }

    /// How many arrived below, for "N new".
    public var countBelow: Int {
        if case .arrived(_, let count) = below { count } else { 0 }
    }

    /// A message arrived at `index` while the newest was off screen.
    mutating func arrived(at index: Int) {
        switch below {
        case .none: below = .arrived(first: index, count: 1)
        case .arrived(let first, let count): below = .arrived(first: first, count: count + 1)
        }
    }

    /// Items were deleted: the New line stays above the same message (the next remaining one
    /// when it was deleted; none when none follows), and "N new" counts what remains of what
    /// arrived below.
    func shifted(_ shift: IndexShift) -> UnreadMarks {
        var marks = UnreadMarks(newLine: newLine.map(shift.place).flatMap { $0 < shift.newTotal ? $0 : nil })
        if case .arrived(let first, let count) = below {
            let gone = (first..<max(first, shift.oldTotal)).filter(shift.removed).count
            let place = shift.place(of: first)
            if count > gone, place < shift.newTotal { marks.below = .arrived(first: place, count: count - gone) }
        }
        return marks
    }

    /// Where `u` goes: the first message that arrived below and was not scrolled to, else
    /// the New line.
    var firstUnread: Int? {
        if case .arrived(let first, _) = below { return first }
        return newLine
    }
}

/// A reply being written: the message it quotes, in which conversation, and its quote as
/// the composer shows it above what is typed.
public struct ReplyDraft: Equatable, Sendable {
    /// What is sent next does to `target`: answers it (`q`), or gives it a new text (`e`).
    public enum Purpose: Equatable, Sendable { case reply, edit }

    public var conversation: ConversationID
    public var target: MessageID
    public var quote: MessageItem.Quote
    public var purpose: Purpose

    public init(conversation: ConversationID, target: MessageID, quote: MessageItem.Quote, purpose: Purpose = .reply) {
        self.conversation = conversation; self.target = target; self.quote = quote; self.purpose = purpose
    }
}
