import RChatCore

/// Seed 001: rChat asks for permission to show alerts the first time a conversation is
/// opened, not at install — once: the store remembers the answer, and
/// `rchat settings desktop-alerts on|off` changes it later. Only where there is a desktop.
extension ChatView {
    static let alertPermissionQuestion = "Show desktop alerts for new messages? (y/n)"
    static let alertPermissionLater = "Change it later with: rchat settings desktop-alerts on|off"

    /// Called when a conversation opens: puts the question up if the user was never asked.
    func askAlertPermissionOnce() {
        guard !alertPermissionConsidered, state.overlay == nil else { return }
        alertPermissionConsidered = true
        // Without a desktop (no session bus and no display) they are never
        // offered: alerts there go to the terminal.
        guard settings.desktop != .unavailable, !model.alertPermissionAsked else { return }
        state.overlay = Overlay(kind: .alertPermission, title: "Desktop alerts", lines: [
            Overlay.Line(Self.alertPermissionQuestion, .bold),
            Overlay.Line(Self.alertPermissionLater, .dim),
        ])
    }

    /// A key while the question is up: `y` allows, `n` or Esc refuses; anything else is
    /// swallowed (never typed into the composer) and the question stays.
    func alertPermissionKey(_ key: Key) {
        let allowed: Bool
        switch key {
        case .character("y"), .character("Y"): allowed = true
        case .character("n"), .character("N"), .escape: allowed = false
        case .control("c"), .control("q"):
            quit()   // unanswered: asked again next time
            return
        default: return
        }
        state.overlay = nil
        model.setAlertPermission(allowed)
        say(allowed ? "Desktop alerts on." : "No desktop alerts; rchat settings desktop-alerts on turns them on.")
    }
}
