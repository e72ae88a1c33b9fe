import RChatCore

/// The conversation list: a line per conversation (name and unread count) and, when the
/// contact is not simply ok, a second line with its state.
enum ListPane {
    static func entryLines(_ c: ConversationSummary) -> Int { c.state == .ok ? 1 : 2 }

    static func draw(_ state: ViewState, _ layout: Layout, _ screen: inout Screen) {
        let width = layout.listWidth
        let height = layout.bodyHeight
        guard width > 2, height > 0 else { return }
        if state.conversations.isEmpty {
            screen.put(Wrap.truncate("No contacts", width: width - 1, ellipsis: state.glyphs.ellipsis),
                       row: layout.bodyTop, column: 1, style: .dim, limit: width)
            return
        }
        // Scroll so the cursor's entry is whole on screen.
        let cursor = min(max(0, state.listCursor), state.conversations.count - 1)
        var first = 0
        var linesThrough = state.conversations[0...cursor].reduce(0) { $0 + entryLines($1) }
        while linesThrough > height, first < cursor {
            linesThrough -= entryLines(state.conversations[first]); first += 1
        }
        var row = layout.bodyTop
        for index in first..<state.conversations.count {
            let c = state.conversations[index]
            guard row + entryLines(c) <= layout.bodyTop + height else { break }
            let isCursor = index == cursor && state.focus == .list
            let isOpen = c.id == state.openConversation
            let base = CellStyle(bold: isOpen, reverse: isCursor)
            screen.fill(row: row, from: 0, to: width, style: base)
            if isOpen { screen.put(state.glyphs.selection, row: row, column: 0, style: base) }
            let badge = c.unread > 0 ? " \(c.unread)" : ""
            let nameWidth = width - 1 - TextWidth.columns(of: badge)
            screen.put(Wrap.truncate(c.name, width: nameWidth, ellipsis: state.glyphs.ellipsis),
                       row: row, column: 1, style: c.state == .blocked ? CellStyle(reverse: isCursor, dim: true) : base, limit: width)
            if !badge.isEmpty {
                screen.put(badge, row: row, column: width - TextWidth.columns(of: badge),
                           style: CellStyle(bold: true, reverse: isCursor, role: .accent), limit: width)
            }
            row += 1
            if let tag = StateTag.text(c.state) {
                let style = c.state == .keysDontMatch
                    ? CellStyle(bold: true, reverse: isCursor, role: .danger) : CellStyle(reverse: isCursor, dim: true)
                screen.fill(row: row, from: 0, to: width, style: CellStyle(reverse: isCursor))
                screen.put(Wrap.truncate(tag, width: width - 3, ellipsis: state.glyphs.ellipsis),
                           row: row, column: 3, style: style, limit: width)
                row += 1
            }
        }
    }
}
