/// Desktop alerts while the view runs (`rchat settings alerts-while-open`): the view shows a
/// banner for a conversation that is not on screen; whether a desktop alert comes too
/// depends on the setting, on whether desktop alerts can and may be shown, and on whether
/// the view's window is seen at all. Per message, `AlertPolicy.alerts` still decides: never
/// for the conversation on screen, never twice, never for muted or blocked contacts.
extension AlertPolicy {
    public enum WhileOpen: String, Sendable, CaseIterable {
        /// Banners only.
        case off
        /// A desktop alert too while the view's window is hidden (the default).
        case unfocused
        /// A desktop alert too, hidden or not.
        case always

        public static let `default` = WhileOpen.unfocused
    }

    /// Whether desktop alerts can be shown here, and may be.
    public enum Desktop: Sendable, CaseIterable {
        /// No session bus and no display: nothing to show them on.
        case unavailable
        /// Not asked yet, or refused (`desktop-alerts off`).
        case notAllowed
        case allowed
    }

    /// What a terminal multiplexer says of the view's window.
    public enum Multiplexer: Sendable, CaseIterable {
        /// Not in tmux or screen.
        case none
        /// Its session has a client, and the view's window is the one shown.
        case attached
        /// Nobody is attached to its session, or another of its windows is shown.
        case detached
        /// It did not answer in time: counted as seen (no alert is better than a wrong one).
        case unknown
    }

    /// What the view knows of whether anyone can see it.
    public struct Window: Sendable, Equatable {
        /// The terminal reported that its window lost focus (`ESC [ O`) and not yet that it
        /// came back.
        public var focusLost: Bool
        public var multiplexer: Multiplexer

        public init(focusLost: Bool = false, multiplexer: Multiplexer = .none) {
            self.focusLost = focusLost
            self.multiplexer = multiplexer
        }

        public var hidden: Bool { focusLost || multiplexer == .detached }
    }

    /// Whether the running view raises desktop alerts for what arrives now.
    public static func desktopWhileOpen(_ setting: WhileOpen, desktop: Desktop, window: Window) -> Bool {
        guard desktop == .allowed else { return false }
        switch setting {
        case .off: return false
        case .unfocused: return window.hidden
        case .always: return true
        }
    }

    /// Whether `desktopWhileOpen` could depend on the window: only then is a multiplexer
    /// asked (it costs a process).
    public static func windowMatters(_ setting: WhileOpen, desktop: Desktop) -> Bool {
        desktop == .allowed && setting == .unfocused
    }
}
