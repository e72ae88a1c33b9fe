import RChatCore

/// The composer's rows at the bottom: the message being written, each of its lines wrapped
/// at the screen's edge, as many rows as it needs up to a third of the screen (then
/// scrolled to keep the cursor's row in view); a quiet hint when it is empty; the Ctrl-R
/// search as bash shows it.
enum ComposerLine {
    /// The most rows the composer takes on a screen of `rows`.
    static func maximumHeight(rows: Int) -> Int { max(1, rows / 3) }

    /// Rows the composer needs now.
    static func height(_ state: ViewState) -> Int {
        if state.prompt != nil { return 1 }
        if case .searching = state.composer.mode { return 1 }
        // A reply's quote takes a row above what is typed.
        let quote = state.openReply == nil ? 0 : 1
        if state.composer.isEmpty { return 1 + quote }
        return min(maximumHeight(rows: state.rows), rows(state).lines.count + quote)
    }

    static func rows(_ state: ViewState) -> ComposerRows {
        ComposerRows(state.composer.characters, cursor: state.composer.cursor,
                     width: max(1, state.columns - TextWidth.columns(of: state.glyphs.prompt) - 1))
    }

    static func draw(_ state: ViewState, _ layout: Layout, _ screen: inout Screen) {
        var row = layout.composerRow
        var height = layout.composerHeight
        let focused = state.focus == .composer && state.overlay == nil
        if let reply = state.openReply, state.prompt == nil, height > 1 {
            let text = (reply.purpose == .edit ? "Editing " : "Replying to ") + TerminalText.sanitized(reply.quote.words, breaks: .shown)
            let hint = reply.purpose == .edit ? "  (Esc: not editing)" : "  (Esc: no reply)"
            let room = max(1, layout.columns - 2 - TextWidth.columns(of: hint))
            screen.put(state.glyphs.quoteMark + Wrap.truncate(text, width: room, ellipsis: state.glyphs.ellipsis) + hint,
                       row: row, column: 0, style: .dim)
            row += 1
            height -= 1
        }
        let prompt = state.glyphs.prompt
        let promptWidth = TextWidth.columns(of: prompt)
        screen.put(prompt, row: row, column: 0, style: CellStyle(bold: focused))
        let room = layout.columns - promptWidth - 1
        if let question = state.prompt {
            drawPrompt(question, state, row: row, from: promptWidth, width: layout.columns, &screen)
            if state.overlay != nil { screen.cursor = nil }
            return
        }
        let composer = state.composer
        if case .searching(let search) = composer.mode {
            drawSearch(search, composer, state.glyphs, row: row, width: layout.columns, &screen)
            if !focused { screen.cursor = nil }
            return
        }
        if composer.isEmpty {
            screen.put(Wrap.truncate(placeholder(state), width: room, ellipsis: state.glyphs.ellipsis),
                       row: row, column: promptWidth, style: .dim)
            screen.cursor = focused ? (row, promptWidth) : nil
            return
        }
        let all = rows(state)
        // Scrolled only as far as it takes to show the cursor's row.
        let top = max(0, min(all.lines.count - height, all.cursor.row - height + 1))
        for i in 0..<height where top + i < all.lines.count {
            screen.put(String(all.lines[top + i]), row: row + i, column: promptWidth, limit: layout.columns)
        }
        screen.cursor = focused ? (row + all.cursor.row - top, promptWidth + all.cursor.column) : nil
    }

    /// A prompt on the composer's row: `Save to: PATH` with the cursor in the path (the
    /// path's end kept in view), or the recording's elapsed time and what the keys do.
    private static func drawPrompt(_ prompt: Prompt, _ state: ViewState, row: Int, from start: Int, width: Int,
                                   _ screen: inout Screen) {
        switch prompt {
        case .save(_, _, let path):
            let label = "Save to: "
            let column = screen.put(label, row: row, column: start, style: .bold, limit: width)
            let room = max(1, width - column - 1)
            let before = String(path.characters[..<path.cursor])
            // Scrolled so the cursor stays on screen: what is left of it gives way first.
            var shownBefore = before
            while TextWidth.columns(of: shownBefore) > room - 1, !shownBefore.isEmpty { shownBefore.removeFirst() }
            let after = String(path.characters[path.cursor...])
            let cursorColumn = screen.put(TerminalText.sanitized(shownBefore, breaks: .shown), row: row, column: column, limit: width)
            screen.put(TerminalText.sanitized(after, breaks: .shown), row: row, column: cursorColumn, limit: width)
            screen.cursor = (row, min(cursorColumn, width - 1))
        case .recording(_, let since):
            let elapsed = max(0, state.now - since)
            let dot = state.glyphs.recording + " "
            let text = "Recording\(state.glyphs.ellipsis) " + TimeText.length(Double(elapsed))
            var column = screen.put(dot, row: row, column: start, style: CellStyle(bold: true, role: .danger), limit: width)
            column = screen.put(text, row: row, column: column, style: .bold, limit: width)
            screen.put(Wrap.truncate("  Enter sends, Esc cancels", width: max(0, width - column), ellipsis: state.glyphs.ellipsis),
                       row: row, column: column, style: .dim, limit: width)
            screen.cursor = nil
        }
    }

    /// `(reverse-i-search)'query': match`, the match on one row (its line breaks as `Glyphs.lineBreak`).
    private static func drawSearch(_ search: HistorySearch, _ composer: Composer, _ glyphs: Glyphs, row: Int,
                                   width: Int, _ screen: inout Screen) {
        let label = (search.failing ? "(failing reverse-i-search)'" : "(reverse-i-search)'") + search.query
        let match = search.match.map { composer.history[$0.entry] } ?? ""
        let shown = match.replacingOccurrences(of: "\n", with: glyphs.lineBreak)
        let start = TextWidth.columns(of: glyphs.prompt)
        let cursor = screen.put(label, row: row, column: start, style: .dim, limit: width)
        let after = screen.put("': ", row: row, column: cursor, style: .dim, limit: width)
        screen.put(Wrap.truncate(shown, width: max(0, width - after - 1), ellipsis: glyphs.ellipsis),
                   row: row, column: after, limit: width)
        screen.cursor = (row, min(cursor, width - 1))
    }

    private static func placeholder(_ state: ViewState) -> String {
        guard let summary = state.openSummary else {
            return "/add CODE adds a contact; F1 help"
        }
        switch summary.state {
        case .blocked: return "\(summary.name) is blocked; /unblock to write again"
        case .keysDontMatch: return "Keys don't match: nothing can be sent until you check their code again"
        case .request: return "Message request: a accepts, d declines, b blocks (/safety: its safety number)"
        default: return "Message \(summary.name)"
        }
    }
}

/// A draft laid out in rows of `width` columns: each of its lines, broken between graphemes
/// where it reaches the edge; and the row and column of the cursor (which always has a
/// cell: at the edge it goes to the start of the next row).
struct ComposerRows: Equatable {
    private(set) var lines: [[Character]] = [[]]
    private(set) var cursor = (row: 0, column: 0)

    static func == (a: ComposerRows, b: ComposerRows) -> Bool {
        a.lines == b.lines && a.cursor == b.cursor
    }

    init(_ characters: [Character], cursor: Int, width: Int) {
        var column = 0
        func placeCursor() {
            if column >= width { lines.append([]); column = 0 }
            self.cursor = (lines.count - 1, column)
        }
        for (i, ch) in characters.enumerated() {
            if ch == "\n" {
                if i == cursor { placeCursor() }
                lines.append([]); column = 0
                continue
            }
            let w = TextWidth.displayed(ch, asciiOnly: false).1
            // A character that does not fit goes to the next row, and a cursor before it too.
            if column + w > width, column > 0 { lines.append([]); column = 0 }
            if i == cursor { placeCursor() }
            lines[lines.count - 1].append(ch)
            column += w
        }
        if cursor >= characters.count { placeCursor() }
    }
}
