import RChatCore

/// The top bar: the open conversation, its state and its disappearing-message timer when
/// there is one, always — what Enter sends goes there.
/// (A banner for a message elsewhere is in the status bar.)
enum HeaderBar {
    static func draw(_ state: ViewState, _ layout: Layout, _ screen: inout Screen) {
        let row = layout.headerRow
        screen.fill(row: row, style: .reverse)
        var col = screen.put(" rChat", row: row, column: 0, style: CellStyle(bold: true, reverse: true))
        guard let summary = state.openSummary else { return }
        col = screen.put(state.glyphs.separator, row: row, column: col, style: .reverse)
        col = screen.put(summary.name, row: row, column: col, style: CellStyle(bold: true, reverse: true))
        if let members = summary.members {
            col = screen.put(state.glyphs.separator, row: row, column: col, style: .reverse)
            col = screen.put(members == 0 ? "you are no longer in it" : "\(members) members", row: row, column: col, style: .reverse)
        }
        if let tag = StateTag.text(summary.state) {
            col = screen.put(state.glyphs.separator, row: row, column: col, style: .reverse)
            col = screen.put(tag, row: row, column: col, style: CellStyle(bold: true, reverse: true, underline: true, role: .warning))
        }
        if let phrase = summary.timer.phrase {
            col = screen.put(state.glyphs.separator, row: row, column: col, style: .reverse)
            col = screen.put(state.glyphs.timer + " " + phrase, row: row, column: col, style: .reverse)
        }
        if summary.state == .request {
            // What each key does to it; nothing else can be done with a request.
            col = screen.put(state.glyphs.separator, row: row, column: col, style: .reverse)
            screen.put(ChatView.requestKeysHint(namesake: summary.namesake.flatMap { state.summary($0)?.name },
                                                glyphs: state.glyphs, room: layout.columns - col),
                       row: row, column: col, style: .reverse)
        }
    }
}

/// The words for a contact's state, as the product says them.
enum StateTag {
    static func text(_ state: ConversationSummary.State) -> String? {
        switch state {
        case .ok: nil
        case .request: "request"
        case .muted: "muted"
        case .blocked: "blocked"
        case .keysDontMatch: "Keys don't match"
        }
    }
}
