import RChatCore

extension ChatView {
    /// A banner for messages in conversations that are not on screen, by the same policy
    /// as every alert (`AlertPolicy`): worded by the `show-in-alerts` setting, one per
    /// contact counted over everything that arrived while it is up ("Sam: 3 new messages"),
    /// one summary for more than five; muted and blocked contacts stay quiet and a request
    /// never shows name or text. A group's are titled with the group and say who wrote them
    /// ("Friends: Alice: New message"); a change of its members is only a row. One bell for
    /// them with `bell on`.
    func showBanner(for messages: [(conversation: ConversationID, preview: String, author: String?, reaction: String?)]) {
        let arrivals = messages.compactMap { m -> AlertPolicy.Arrival? in
            guard let summary = state.summary(m.conversation) else { return nil }
            if summary.members != nil {
                guard let author = m.author else { return nil }
                return AlertPolicy.Arrival(contactName: author, conversation: m.conversation,
                                           kind: m.reaction.map(AlertPolicy.Kind.reaction) ?? .text(m.preview),
                                           contactMuted: summary.state == .muted, contactBlockedOrDeleted: summary.state == .blocked,
                                           group: summary.name)
            }
            return AlertPolicy.Arrival(contactName: summary.name, conversation: m.conversation,
                                       kind: summary.state == .request ? .request : m.reaction.map(AlertPolicy.Kind.reaction) ?? .text(m.preview),
                                       contactMuted: summary.state == .muted, contactBlockedOrDeleted: summary.state == .blocked)
        }.filter(AlertPolicy.alerts)
        guard !arrivals.isEmpty else { return }
        if settings.bell { request(.bell) }
        // Counted while it is up: one whose time ran out (not yet dropped by a frame) is gone.
        let up = state.banner.flatMap { $0.until > state.now ? $0.arrivals : nil } ?? []
        let all = up + arrivals
        state.banner = Banner(text: AlertPolicy.counted(all, content: settings.alerts).map(\.line).joined(separator: state.glyphs.separator),
                              until: state.now + options.bannerSeconds, arrivals: all)
    }

    // MARK: Desktop alerts while the view runs

    /// How long a multiplexer's answer is taken as still true, in seconds.
    static let multiplexerAnswerKept = 3.0

    /// Messages that arrived in conversations not on screen: held for a desktop alert when
    /// `alerts-while-open` says so now (`AlertPolicy.desktopWhileOpen`), and alerted together
    /// once they stop arriving (`AlertBurst`).
    func considerDesktopAlerts(_ arrivals: [(conversation: ConversationID, id: MessageID)]) {
        guard !arrivals.isEmpty else { return }
        let setting = settings.whileOpen, desktop = settings.desktop
        let window = AlertPolicy.windowMatters(setting, desktop: desktop) ? shownWindow() : AlertPolicy.Window()
        guard AlertPolicy.desktopWhileOpen(setting, desktop: desktop, window: window) else { return }
        desktopBurst.add(arrivals, at: clock.seconds())
    }

    /// Whether anyone can see the view: its terminal's focus reports, and the multiplexer
    /// (asked at most every few seconds).
    func shownWindow() -> AlertPolicy.Window {
        let now = clock.seconds()
        if multiplexerAnswer == nil || now - multiplexerAnswer!.at >= Self.multiplexerAnswerKept {
            multiplexerAnswer = (now, options.multiplexer())
        }
        return AlertPolicy.Window(focusLost: state.terminalFocus == .lost, multiplexer: multiplexerAnswer!.value)
    }

    /// The held desktop alerts whose time has come (all of them with `all`: the view quits).
    public func postDesktopAlerts(all: Bool = false) {
        thread.check()
        flushDesktopAlerts(all: all)
    }

    func flushDesktopAlerts(all: Bool) {
        let due = all ? desktopBurst.takeAll() : desktopBurst.takeDue(at: clock.seconds())
        if !due.isEmpty { model.alertOnDesktop(due, onScreen: state.openConversation) }
    }

    /// How soon held desktop alerts are due, in milliseconds.
    var desktopAlertMilliseconds: Int32? {
        desktopBurst.due.map { Int32(clamping: Int((max(0, $0 - clock.seconds()) * 1000).rounded(.up)) + 1) }
    }
}
