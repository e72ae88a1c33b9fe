import RChatCore

/// The conversation list: a line per conversation (name and unread count) and, when the
/// contact is not simply ok, a second line with its state.
enum ListPane {
    static func entryLines(_ c: ConversationSummary) -> Int { c.state == .ok ? 1 : 2 }

    /// The entries on screen, each with its first row: scrolled so the cursor's entry is
    /// whole. What is drawn and what a click picks both come from here.
    static func entries(_ state: ViewState, _ layout: Layout) -> [(index: Int, row: Int)] {
        let height = layout.bodyHeight
        guard layout.listWidth > 2, height > 0, !state.conversations.isEmpty else { return [] }
        let cursor = min(max(0, state.listCursor), state.conversations.count - 1)
        var first = 0
        var linesThrough = state.conversations[0...cursor].reduce(0) { $0 + entryLines($1) }
        while linesThrough > height, first < cursor {
            linesThrough -= entryLines(state.conversations[first]); first += 1
        }
        var shown: [(index: Int, row: Int)] = []
        var row = layout.bodyTop
        for index in first..<state.conversations.count {
            guard row + entryLines(state.conversations[index]) <= layout.bodyTop + height else { break }
            shown.append((index, row))
            row += entryLines(state.conversations[index])
        }
        return shown
    }

    /// The conversation whose entry covers screen row `row`.
    static func entry(atRow row: Int, _ state: ViewState, _ layout: Layout) -> Int? {
        entries(state, layout).first { row >= $0.row && row < $0.row + entryLines(state.conversations[$0.index]) }?.index
    }

    static func draw(_ state: ViewState, _ layout: Layout, _ screen: inout Screen) {
        let width = layout.listWidth
        let height = layout.bodyHeight
        guard width > 2, height > 0 else { return }
        if state.conversations.isEmpty {
            screen.put(Wrap.truncate("No contacts", width: width - 1, ellipsis: state.glyphs.ellipsis),
                       row: layout.bodyTop, column: 1, style: .dim, limit: width)
            return
        }
        let cursor = min(max(0, state.listCursor), state.conversations.count - 1)
        for (index, first) in entries(state, layout) {
            var row = first
            let c = state.conversations[index]
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
            }
        }
    }
}
