import Foundation
import RChatCore

/// Everything the screen shows, as values: the renderer turns it into a Screen without
/// asking the model anything.
public struct ViewState {
    public var rows: Int
    public var columns: Int
    public var glyphs: Glyphs
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
    public var connection: ShownConnection = .connecting
    /// Whether the terminal window has focus, as focus reporting last said (a terminal that
    /// never reports counts as focused). While it has not, nothing drawn counts as read.
    public var terminalFocus: TerminalFocus = .focused

    public static let minimumRows = 10
    public static let minimumColumns = 40

    public var isTooSmall: Bool { rows < Self.minimumRows || columns < Self.minimumColumns }

    /// The open conversation, by id: a rename changes what the header says, not this.
    public var openConversation: ConversationID? { window?.conversation }

    public var openSummary: ConversationSummary? {
        openConversation.flatMap(summary)
    }

    public func summary(_ id: ConversationID) -> ConversationSummary? {
        conversations.first { $0.id == id }
    }

    /// Unread messages everywhere except blocked contacts: the badge.
    public var unreadBadge: Int {
        conversations.filter { $0.state != .blocked }.reduce(0) { $0 + $1.unread }
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

    /// The engine's `state`, told at `now`.
    public init(_ state: ConnectionState, at now: Int64) {
        switch state {
        case .connecting: self = .connecting
        case .online: self = .online
        case .stalled: self = .stalled
        case .offline(let retryIn): self = .offline(retryAt: retryIn > 0 ? now + Int64(retryIn) : nil)
        }
    }

    /// Whole seconds left before the retry, while a countdown shows.
    func secondsToRetry(now: Int64) -> Int64? {
        guard case .offline(let retryAt?) = self, retryAt > now else { return nil }
        return retryAt - now
    }
}
