import RChatCore

extension ChatView {
    /// A banner for messages in conversations that are not on screen, by the same policy
    /// as every alert (`AlertPolicy`): worded by the `show-in-alerts` setting, grouped by
    /// contact, one summary for more than five; muted and blocked contacts stay quiet and a
    /// request never shows name or text. One bell for them with `bell on`.
    func showBanner(for messages: [(conversation: ConversationID, preview: String)]) {
        let arrivals = messages.compactMap { m -> AlertPolicy.Arrival? in
            guard let summary = state.summary(m.conversation) else { return nil }
            return AlertPolicy.Arrival(contactName: summary.name, kind: summary.state == .request ? .request : .text(m.preview),
                                       contactMuted: summary.state == .muted, contactBlockedOrDeleted: summary.state == .blocked)
        }
        let alerts = AlertPolicy.alerts(for: arrivals, content: settings.alerts)
        guard !alerts.isEmpty else { return }
        if settings.bell { request(.bell) }
        state.banner = Banner(text: alerts.map(\.line).joined(separator: state.glyphs.separator),
                              until: state.now + options.bannerSeconds)
    }
}
