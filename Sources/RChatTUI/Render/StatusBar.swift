import RChatCore

/// The bar above the composer: the relay connection, the unread badge, "N new" when
/// messages arrived below while scrolled up, then a banner for a message elsewhere, what
/// just happened, or where help is.
enum StatusBar {
    static func connectionText(_ c: ShownConnection, now: Int64, _ glyphs: Glyphs) -> String {
        let dots = glyphs.ellipsis
        switch c {
        case .online: return "Online"
        case .connecting: return "Connecting" + dots
        case .stalled: return "Relay not answering, /reconnect"
        case .offline(nil): return "Offline"
        case .stopped(let reason): return "Stopped (restart rChat): " + reason
        case .offline(.some):
            guard let left = c.secondsToRetry(now: now) else { return "Offline, retrying" + dots }
            return "Offline, retrying in \(left) s"
        }
    }

    static func draw(_ state: ViewState, _ layout: Layout, _ screen: inout Screen) {
        let row = layout.statusRow
        let bar = CellStyle(reverse: true)
        screen.fill(row: row, style: bar)
        let conn = connectionText(state.connection, now: state.now, state.glyphs)
        var col = screen.put(" " + conn, row: row, column: 0,
                             style: CellStyle(bold: state.connection != .online, reverse: true,
                                              role: state.connection == .online ? .good : .warning))
        let sep = state.glyphs.separator
        if state.unreadBadge > 0 {
            col = screen.put(sep, row: row, column: col, style: bar)
            col = screen.put("\(state.unreadBadge) unread", row: row, column: col, style: CellStyle(bold: true, reverse: true))
        }
        if let window = state.window, state.anchor != nil || !window.reachesNewest {
            col = screen.put(sep, row: row, column: col, style: bar)
            let below = state.unread.countBelow
            col = below > 0
                ? screen.put("\(below) new \(state.glyphs.moreBelow) End", row: row, column: col,
                             style: CellStyle(bold: true, reverse: true, role: .accent))
                : screen.put("\(state.glyphs.moreBelow) End: newest", row: row, column: col, style: bar)
        }
        col = screen.put(sep, row: row, column: col, style: bar)
        if let banner = state.banner {
            // Newer than any notice: keys clear both, and only events bring banners.
            screen.put(Wrap.truncate(banner.text, width: layout.columns - col, ellipsis: state.glyphs.ellipsis),
                       row: row, column: col, style: CellStyle(bold: true, reverse: true, role: .accent))
        } else if let notice = state.notice {
            screen.put(Wrap.truncate(notice.text, width: layout.columns - col, ellipsis: state.glyphs.ellipsis),
                       row: row, column: col, style: CellStyle(bold: true, reverse: true, underline: notice.isError,
                                                                role: notice.isError ? .danger : .normal))
        } else {
            screen.put(hint(state), row: row, column: col, style: bar)
        }
    }

    private static func hint(_ state: ViewState) -> String {
        switch state.focus {
        case .composer where state.composer.mode == .afterCtrlX: return "Ctrl-X: Ctrl-E writes the message in your editor, Ctrl-G cancels"
        case .composer: return "F1 help"
        case .conversation where state.selected != nil:
            if case .message(let m)? = state.selected.flatMap({ state.window?.item(at: $0) }), case .attachment(let a) = m.content {
                let play = a.kind == .voice
                return state.composer.isEmpty
                    ? "o open, s save\(play ? ", p play" : ""), r Resend, i details, Esc back, F1 help"
                    : "Alt-O open, Alt-S save\(play ? ", Alt-P play" : ""), Alt-R Resend, Alt-I details, Esc back, F1 help"
            }
            return state.composer.isEmpty ? "r Resend, i details, u unread, Esc back, F1 help"
                                          : "Alt-R Resend, Alt-I details, Alt-U unread, Esc back, F1 help"
        case .conversation: return "Up/Down select, typing goes to the composer, F1 help"
        case .list: return "Up/Down choose, Enter open, F1 help"
        }
    }
}
