import RChatCore

/// The last row: the line being written, scrolled sideways to keep the cursor in view, or
/// a quiet hint when it is empty.
enum ComposerLine {
    static func draw(_ state: ViewState, _ layout: Layout, _ screen: inout Screen) {
        let row = layout.composerRow
        let focused = state.focus == .composer && state.overlay == nil
        let prompt = state.glyphs.prompt
        let promptWidth = TextWidth.columns(of: prompt)
        screen.put(prompt, row: row, column: 0, style: CellStyle(bold: focused))
        let room = layout.columns - promptWidth - 1
        let composer = state.composer
        if composer.isEmpty {
            screen.put(Wrap.truncate(placeholder(state), width: room, ellipsis: state.glyphs.ellipsis),
                       row: row, column: promptWidth, style: .dim)
            screen.cursor = focused ? (row, promptWidth) : nil
            return
        }
        // Drop characters from the left until the cursor fits.
        var chars = composer.characters[...]
        var hidden = 0
        var cursorColumn = composer.cursorColumn
        while cursorColumn - hidden > room, let first = chars.first {
            hidden += TextWidth.displayed(first, asciiOnly: false).1
            chars = chars.dropFirst()
        }
        screen.put(String(chars), row: row, column: promptWidth, limit: layout.columns)
        cursorColumn -= hidden
        screen.cursor = focused ? (row, promptWidth + cursorColumn) : nil
    }

    private static func placeholder(_ state: ViewState) -> String {
        guard let summary = state.openSummary else {
            return "/add CODE adds a contact; F1 help"
        }
        switch summary.state {
        case .blocked: return "\(summary.name) is blocked; /unblock to write again"
        case .keysDontMatch: return "Keys don't match: nothing can be sent until you check their code again"
        default: return "Message \(summary.name)"
        }
    }
}
