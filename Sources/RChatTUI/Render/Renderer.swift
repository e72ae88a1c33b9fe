import RChatCore

/// What a frame drew that the engine cares about.
public struct RenderReport: Equatable, Sendable {
    /// Incoming messages of the open conversation that are on screen (Read receipts).
    public var shownIncoming: [MessageID] = []
}

/// Turns a ViewState into a Screen. Pure: no model, no terminal, no clock.
public enum Renderer {
    @discardableResult
    public static func render(_ state: ViewState, to screen: inout Screen) -> RenderReport {
        screen = Screen(rows: state.rows, columns: state.columns, asciiOnly: !state.unicodeText)
        screen.title = state.terminalTitle
        if state.isTooSmall {
            drawTooSmall(state, &screen)
            return RenderReport()
        }
        let layout = Layout(state)
        HeaderBar.draw(state, layout, &screen)
        if layout.listWidth > 0 {
            ListPane.draw(state, layout, &screen)
            for row in layout.bodyTop..<(layout.bodyTop + layout.bodyHeight) {
                screen.put(state.glyphs.vertical, row: row, column: layout.listWidth, style: .dim)
            }
        }
        var report = RenderReport()
        report.shownIncoming = drawConversation(state, layout, &screen)
        StatusBar.draw(state, layout, &screen)
        ComposerLine.draw(state, layout, &screen)
        if let overlay = state.overlay {
            OverlayBox.draw(overlay, state.glyphs, layout, &screen)
            screen.cursor = nil
            screen.images = []   // a picture would be drawn over the box
            // Covered messages are not "shown".
            report.shownIncoming = []
        }
        return report
    }

    private static func drawTooSmall(_ state: ViewState, _ screen: inout Screen) {
        let message = "Terminal too small (\(state.columns)x\(state.rows)). rChat needs at least "
            + "\(ViewState.minimumColumns)x\(ViewState.minimumRows): enlarge the window."
        let lines = Wrap.lines(message, width: max(1, state.columns))
        let top = max(0, (state.rows - lines.count) / 2)
        for (i, line) in lines.enumerated() where top + i < state.rows {
            let left = max(0, (state.columns - TextWidth.columns(of: line)) / 2)
            screen.put(line, row: top + i, column: left, style: .bold)
        }
        screen.cursor = nil
    }

    static func conversationPane(_ state: ViewState, _ layout: Layout) -> ConversationPane? {
        guard state.window != nil else { return nil }
        var pane = ConversationPane(width: layout.paneWidth, height: layout.bodyHeight, glyphs: state.glyphs,
                                    time: TimeText(timeZone: state.timeZone), contact: state.openSummary?.name ?? "",
                                    selected: state.focus == .conversation ? state.selected : nil, newLine: state.unread.newLine,
                                    rates: state.transfers, previews: state.previews, durations: state.durations)
        if state.openSummary?.members != nil, let window = state.window {
            // A group's column holds its authors' names as far as they are loaded, and "You".
            pane.widestName = window.items.compactMap { item -> String? in
                if case .message(let m) = item { return m.author.map { TerminalText.sanitized($0, breaks: .shown) } } else { return nil }
            }.reduce("You") { TextWidth.columns(of: $1) > TextWidth.columns(of: $0) ? $1 : $0 }
        }
        return pane
    }

    /// Draws the open conversation, bottom-aligned; returns the incoming messages drawn.
    private static func drawConversation(_ state: ViewState, _ layout: Layout, _ screen: inout Screen) -> [MessageID] {
        guard let window = state.window, let pane = conversationPane(state, layout) else {
            drawWelcome(state, layout, &screen)
            return []
        }
        if window.total == 0 {
            screen.put("No messages yet: write the first one below.", row: layout.bodyTop + layout.bodyHeight / 2,
                       column: layout.paneLeft + 2, style: .dim, limit: layout.columns)
            return []
        }
        let lines = pane.stack(window, anchor: state.anchor)
        let top = layout.bodyTop + layout.bodyHeight - lines.count
        var shown: [MessageID] = []
        for (i, line) in lines.enumerated() {
            for span in line.spans {
                screen.put(span.text, row: top + i, column: layout.paneLeft + span.column, style: span.style,
                           limit: layout.columns)
            }
            // An image only where all of it is in the pane: a terminal cannot draw part of one.
            if var image = line.image, top + i >= layout.bodyTop, top + i + image.rows <= layout.bodyTop + layout.bodyHeight {
                image.row = top + i
                image.column += layout.paneLeft
                screen.images.append(image)
            }
            if let index = line.item, case .message(let m)? = window.item(at: index),
               m.direction == .incoming, shown.last != m.id {
                shown.append(m.id)
            }
        }
        return shown
    }

    private static func drawWelcome(_ state: ViewState, _ layout: Layout, _ screen: inout Screen) {
        let text = state.conversations.isEmpty
            ? "No conversations yet. Type /add CODE to add a contact, or /code to show yours. F1 shows every key."
            : "Choose a conversation in the list (Tab, Up/Down, Enter). F1 shows every key."
        let width = max(1, layout.paneWidth - 4)
        for (i, line) in Wrap.lines(text, width: width).enumerated() where i < layout.bodyHeight {
            screen.put(line, row: layout.bodyTop + 1 + i, column: layout.paneLeft + 2, style: .dim, limit: layout.columns)
        }
    }
}
