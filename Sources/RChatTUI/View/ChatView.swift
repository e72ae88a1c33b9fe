import Foundation
import RChatCore

/// The view's brain, without a terminal: keys and engine events in, Screens out. It owns
/// the ViewState, asks the model only for what is on screen (a page, not the history),
/// and sends intents back. The curses backend and the tests drive it the same way.
public final class ChatView {
    public internal(set) var state: ViewState
    let model: ChatModel
    let options: TUIOptions
    /// The account's settings the view follows, read again when a command changes them.
    var settings: ViewSettings { didSet { state.glyphs = Self.glyphs(terminalGlyphs, settings) } }
    /// What the terminal can draw (Unicode in a UTF-8 locale); `glyphs ascii` narrows it.
    let terminalGlyphs: Glyphs
    let now: () -> Int64
    /// Incoming messages already reported as shown in the open conversation.
    var reportedShown: Set<MessageID> = []
    /// Each conversation's draft and whether the store holds it.
    var drafts = DraftBook()
    public internal(set) var quitRequested = false
    /// Ctrl-Z: the backend should give the terminal back to the shell, and clear this
    /// when the job is resumed.
    public var suspendRequested = false
    /// The desktop-alerts question was considered (asked, or found answered): at most once
    /// per run, whatever the store says afterwards.
    var alertPermissionConsidered = false
    /// Ctrl-L: the backend should repaint everything, not just the changes.
    public var wantsFullRedraw = false
    /// The draft to hand to the external editor (Ctrl-X Ctrl-E), until the backend takes it.
    var editorRequest: String?
    /// Bells and clipboard copies asked for since the backend last took them.
    private(set) var pendingEffects: [TerminalEffect] = []
    /// The UI thread, the one that made the view: the only one that may drive it.
    let thread = ThreadOwner("view")
    /// Where transfer rates are timed.
    let clock: MonotonicClock
    /// When the moving attachments on screen are next read again (`clock` seconds).
    var nextTransferRead = 0.0
    /// Photos' previews, rendered off the frame's path.
    let previewCache = PhotoPreviews()
    /// What the backend learnt of the terminal: its cell in pixels, its colours.
    public var terminalTraits = TerminalTraits()
    /// `/voice` under way.
    var recorder: ActiveRecording?
    /// Voice messages' lengths, read off the UI thread; its results wake the backend
    /// through the previews' descriptor.
    lazy var voiceLengths = VoiceLengths(done: { [previewCache] in previewCache.wake() })
    /// Whether the terminal was asked for mouse reports.
    var mouseReporting = false
    /// Messages held for a desktop alert while the view runs (`alerts-while-open`).
    var desktopBurst = AlertBurst<(conversation: ConversationID, id: MessageID)>()
    /// The multiplexer's last answer (`clock` seconds).
    var multiplexerAnswer: (at: Double, value: AlertPolicy.Multiplexer)?

    public init(model: ChatModel, options: TUIOptions = TUIOptions(), glyphs: Glyphs = .unicode,
                rows: Int, columns: Int, now: @escaping () -> Int64 = { Int64(Date().timeIntervalSince1970) },
                clock: MonotonicClock = SystemMonotonicClock()) {
        self.model = model
        self.clock = clock
        self.options = options
        self.now = now
        let settings = model.viewSettings()
        self.settings = settings
        terminalGlyphs = glyphs
        thread.claim()
        state = ViewState(rows: rows, columns: columns, glyphs: Self.glyphs(glyphs, settings), timeZone: options.timeZone)
        state.unicodeText = glyphs.isUnicode
        state.now = now()
        state.connection = ShownConnection(model.connection(), at: state.now)
        reloadConversations()
        applyMouseSetting()
        let owed = model.takeOwedAlerts()
        if !owed.isEmpty { say("While you were away: " + owed.joined(separator: state.glyphs.separator)) }
        if let requested = model.takeOpenRequest(), state.summary(requested) != nil {
            open(requested)   // a clicked alert started this view (`rchat notify` asked for it)
        } else if let name = options.openAtStart, let summary = ContactNames.pick(name, from: state.conversations, name: \.name) {
            open(summary.id)
        } else if let last = model.lastOpenConversation, state.conversations.contains(where: { $0.id == last }) {
            open(last)
        } else if !state.conversations.isEmpty {
            state.focus = .list
        }
    }

    /// The glyphs drawn: ASCII where the terminal cannot draw Unicode or `glyphs ascii` says so.
    static func glyphs(_ terminal: Glyphs, _ settings: ViewSettings) -> Glyphs {
        terminal.isUnicode && settings.glyphs == .unicode ? .unicode : .ascii
    }

    /// The terminal effects asked for since the last call, oldest first; the backend
    /// writes them before the next frame.
    public func takeEffects() -> [TerminalEffect] {
        thread.check()
        defer { pendingEffects.removeAll() }
        return pendingEffects
    }

    func request(_ effect: TerminalEffect) { pendingEffects.append(effect) }

    /// Items fetched per page: two screens' worth.
    var pageSize: Int { max(20, state.rows * 2) }

    // MARK: Frames

    /// Loads what the screen needs, renders it and sends Read receipts for what was drawn,
    /// unless the terminal reported that its window lost focus: then nobody is looking, and
    /// what is drawn counts once focus comes back (if it is still on screen).
    public func frame() -> Screen {
        thread.check()
        tick()
        prepare()
        if state.anchor == nil, state.window?.reachesNewest == true {
            state.unread.below = .none   // the newest is on screen: nothing new is below
        }
        var screen = Screen(rows: 0, columns: 0)
        let report = Renderer.render(state, to: &screen)
        let fresh = report.shownIncoming.filter { !reportedShown.contains($0) }
        if let conversation = state.openConversation, !fresh.isEmpty, state.terminalFocus == .focused {
            reportedShown.formUnion(fresh)
            model.markShown(in: conversation, messages: fresh)
        }
        return screen
    }

    /// Drops a banner whose time is up and a notice no longer true; writes the drafts whose
    /// time has come.
    public func tick() {
        state.now = now()
        if let banner = state.banner, banner.until <= state.now { state.banner = nil }
        state.notice = state.notice?.after(.looked)
        flushDesktopAlerts(all: false)
        saveDueDrafts()
        readTransfersIfDue()
    }

    /// When the view next needs to act on its own (a banner expiring, the next second of
    /// an "Offline, retrying in N s" countdown, a draft to write), unix seconds; nil when idle.
    public var nextDeadline: Int64? {
        let countdown = state.connection.secondsToRetry(now: state.now).map { _ in state.now + 1 }
        return [state.banner?.until, countdown, drafts.nextDue].compactMap { $0 }.min()
    }

    public func resize(rows: Int, columns: Int) {
        thread.check()
        state.rows = rows
        state.columns = columns
        // The anchor names an item, so the same message stays at the bottom at any width.
    }

    /// Makes sure the items the pane will draw are loaded: the anchor's item and a
    /// screen's worth above it.
    func prepare() {
        guard var window = state.window, let pane = pane() else { return }
        if let anchor = state.anchor {
            if window.item(at: anchor.item) == nil { window.jump(to: anchor.item, model: model) }
            window.loadBack(to: anchor.item - pane.height, model: model)
        } else {
            if !window.reachesNewest { window.jump(to: window.total - 1, model: model) }
            window.loadBack(to: window.end - 1 - pane.height, model: model)
        }
        state.window = window
        refreshPreviews(pane)
        refreshDurations()
    }

    func pane() -> ConversationPane? {
        Renderer.conversationPane(state, Layout(state))
    }

    // MARK: Conversations

    /// Fetches the list again. Everything is kept by id: a renamed conversation stays open,
    /// with its rows, scroll position and the composer's draft; one gone from the list closes.
    func reloadConversations() {
        let cursorID = state.conversations.indices.contains(state.listCursor)
            ? state.conversations[state.listCursor].id : nil
        state.conversations = model.conversations()
        if let id = cursorID, let i = state.conversations.firstIndex(where: { $0.id == id }) {
            state.listCursor = i
        } else {
            state.listCursor = min(state.listCursor, max(0, state.conversations.count - 1))
        }
        if let open = state.openConversation, state.summary(open) == nil {
            close()
        }
    }

    /// Opens a conversation: the one left keeps its draft, this one's comes back into the
    /// composer, and its unread messages get the New line above them.
    func open(_ conversation: ConversationID) {
        let typedWithNothingOpen = state.openConversation == nil ? state.composer.kept : nil
        keepDraftOfOpenConversation()
        state.window = ConversationWindow(conversation: conversation, model: model, pageSize: pageSize)
        state.anchor = nil
        state.selected = nil
        reportedShown = []
        showDraft(of: conversation)
        if let typed = typedWithNothingOpen { carry(typed, into: conversation) }
        let unread = state.summary(conversation)?.unread ?? 0
        state.unread = UnreadMarks(newLine: unread > 0 ? incoming(countingBack: unread) : nil)
        if let i = state.conversations.firstIndex(where: { $0.id == conversation }) { state.listCursor = i }
        if model.lastOpenConversation != conversation { model.rememberOpenConversation(conversation) }
        askAlertPermissionOnce()
    }

    /// The open conversation is gone from the list. What was typed there is held (not
    /// written: the store may no longer have the conversation), in case it comes back.
    func close() {
        if let open = state.openConversation { drafts.held[open] = state.composer.kept }
        state.composer.show(nil)
        state.unread = UnreadMarks()
        state.window = nil
        state.anchor = nil
        state.selected = nil
        reportedShown = []
        model.rememberOpenConversation(nil)
        if state.focus == .conversation { state.focus = .list }
    }

    /// Shows `text` in the status bar until a key, or until what `lasts` names ends.
    func say(_ text: String, error: Bool = false, lasts: Notice.Lasts = .untilKey) {
        state.notice = Notice(text: text, isError: error, lasts: lasts)
    }

    // MARK: Engine events

    /// Applies what changed; the next frame redraws it. A status change touches one item,
    /// so the composer and the scroll position stay as they are.
    public func handle(_ events: [ChatEvent]) {
        thread.check()
        state.now = now()
        var refreshList = false
        var reloadRows = false
        var openRequested = false
        var transfersMoved = false
        var elsewhere: [(conversation: ConversationID, id: MessageID, preview: String, author: String?, reaction: String?)] = []
        for event in events {
            switch event {
            case .conversationsChanged:
                refreshList = true
            case .newMessage(let conversation, let id, let preview, let author, let reaction):
                refreshList = true
                if conversation == state.openConversation, let window = state.window {
                    let following = state.anchor == nil && window.reachesNewest
                    state.window?.syncTail(model: model)
                    // A reaction changes a message there; nothing arrived below.
                    if !following && reaction == nil { state.unread.arrived(at: window.total) }
                } else {
                    elsewhere.append((conversation, id, preview, author, reaction))
                }
            case .statusChanged(let conversation, let id, let status):
                state.notice = state.notice?.after(.status(id, status))   // "Sending photo.png." goes once it left Sending
                if conversation == state.openConversation {
                    _ = state.window?.update(id, status: status)
                    // The store withdraws a row's Resend once its messages were resent or delivered.
                    reloadRows = reloadRows || state.window?.rowOffersResend(for: id) == true
                }
            case .transferMoved(let conversation, _):
                if conversation == state.openConversation { reloadRows = true; transfersMoved = true }
            case .itemsRemoved(let conversation, let ids):
                refreshList = true
                if conversation == state.openConversation { dropRemoved(ids) }
            case .rowAdded(let conversation):
                // A row can come with Resent markers on earlier messages: fetch the range again.
                if conversation == state.openConversation { state.window?.reload(model: model) }
            case .connectionChanged(let connection):
                state.connection = ShownConnection(connection, at: state.now)
            case .changedElsewhere:
                refreshList = true
                reloadRows = true
                settings = model.viewSettings()
                applyMouseSetting()
                openRequested = true
            }
        }
        if reloadRows { state.window?.reload(model: model) }
        if transfersMoved { recordTransfers() }   // each reading feeds the rates
        if refreshList { reloadConversations() }
        // An alert of another process was clicked: its conversation comes to the front.
        if openRequested, let id = model.takeOpenRequest(), state.summary(id) != nil {
            switchTo(id)
            state.focus = .composer
        }
        showBanner(for: elsewhere.map { ($0.conversation, $0.preview, $0.author, $0.reaction) })
        considerDesktopAlerts(elsewhere.map { ($0.conversation, $0.id) })
    }
}
