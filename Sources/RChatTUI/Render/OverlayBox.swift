import RChatCore

/// An overlay drawn as a box in the middle of the screen, with lines of its own (box
/// characters drawn by hand: Unicode or ASCII, never the terminal's line-drawing set).
enum OverlayBox {
    static func draw(_ overlay: Overlay, _ glyphs: Glyphs, _ layout: Layout, _ screen: inout Screen) {
        let maxInner = max(10, layout.columns - 6)
        let widest = overlay.lines.filter { $0.fit != .edgeToEdge }.map { TextWidth.columns(of: $0.text) }.max() ?? 0
        let inner = min(maxInner, max(widest, TextWidth.columns(of: overlay.title) + 4, 20))
        let wrapped = wrappedLines(overlay, width: inner, screenColumns: layout.columns)
        let footer = overlay.kind.footer
        let maxBody = max(1, layout.rows - 4)
        let bodyHeight = min(wrapped.count, maxBody)
        let width = inner + 4
        let height = bodyHeight + 2
        let left = max(0, (layout.columns - width) / 2)
        let top = max(0, (layout.rows - height) / 2)
        let scroll = min(max(0, overlay.scroll), max(0, wrapped.count - bodyHeight))

        // A box all but as wide as the screen: the one or two columns beside it would show
        // slivers of what is under it (half a status, a line's last letter), so its rows are
        // blank there.
        if layout.columns - width < 6 {
            for row in top..<min(layout.rows, top + height) {
                screen.fill(row: row, from: 0, to: left)
                screen.fill(row: row, from: left + width)
            }
        }
        let h = glyphs.horizontal
        let title = " \(overlay.title) "
        let titleWidth = TextWidth.columns(of: title)
        screen.put(glyphs.topLeft + h + title + String(repeating: h, count: max(0, width - 3 - titleWidth)) + glyphs.topRight,
                   row: top, column: left)
        screen.restyle(row: top, from: left + 2, to: left + 2 + titleWidth) { $0.bold = true }
        for i in 0..<bodyHeight {
            let row = top + 1 + i
            let line = wrapped[scroll + i]
            if line.fit == .edgeToEdge {
                // Across the whole row, no border: a mouse drag picks up only the text.
                screen.fill(row: row)
                screen.put(line.text, row: row, column: 0, style: line.style, limit: layout.columns)
                continue
            }
            screen.put(glyphs.vertical, row: row, column: left)
            screen.fill(row: row, from: left + 1, to: left + width - 1)
            let text = line.fit == .cut ? Wrap.pad(line.text, width: inner, ellipsis: glyphs.ellipsis) : line.text
            screen.put(text, row: row, column: left + 2, style: line.style, limit: left + width - 2)
            if let lead = line.lead { screen.put(lead.text, row: row, column: left + 2, style: lead.style, limit: left + width - 2) }
            screen.put(glyphs.vertical, row: row, column: left + width - 1)
        }
        let more = scroll + bodyHeight < wrapped.count ? " \(glyphs.moreBelow) " : ""
        let foot = " \(footer) " + more
        let footWidth = min(TextWidth.columns(of: foot), max(0, width - 4))
        screen.put(glyphs.bottomLeft + h + Wrap.truncate(foot, width: footWidth, ellipsis: glyphs.ellipsis)
                   + String(repeating: h, count: max(0, width - 3 - footWidth)) + glyphs.bottomRight,
                   row: top + height - 1, column: left)
    }

    /// The overlay's lines wrapped to the box; an edge-to-edge line is cut only where the
    /// screen ends (`screenColumns` per row), each piece keeping `.edgeToEdge`.
    static func wrappedLines(_ overlay: Overlay, width: Int, screenColumns: Int) -> [Overlay.Line] {
        overlay.lines.flatMap { line -> [Overlay.Line] in
            var rows = wrapped(line, width: width, screenColumns: screenColumns)
            if !rows.isEmpty { rows[0].lead = line.lead }
            return rows
        }
    }

    /// One overlay line as the rows it takes (without its lead).
    private static func wrapped(_ line: Overlay.Line, width: Int, screenColumns: Int) -> [Overlay.Line] {
        let hang: Int
        switch line.fit {
        case .edgeToEdge:
            return rows(of: line.text, columns: max(1, screenColumns)).map { Overlay.Line(copyable: $0, line.style) }
        case .cut:
            return [line]
        case .wrapped(let h):
            hang = h
        }
        guard hang > 0, line.text.count > hang else {
            return Wrap.lines(line.text, width: width).map { Overlay.Line($0, line.style) }
        }
        let head = String(line.text.prefix(hang))
        if hang > width / 2 {
            // Too narrow for two columns: the keys on their line, the words indented below.
            var trimmed = head
            while trimmed.last == " " { trimmed.removeLast() }
            let words = Wrap.lines(String(line.text.dropFirst(hang)), width: width - 2)
            return [Overlay.Line(trimmed, line.style)] + words.map { Overlay.Line("  " + $0, line.style) }
        }
        let parts = Wrap.lines(String(line.text.dropFirst(hang)), width: width - hang)
        let pad = String(repeating: " ", count: hang)
        return parts.enumerated().map { Overlay.Line(($0.offset == 0 ? head : pad) + $0.element, line.style) }
    }

    /// `text` cut into rows of at most `columns` columns, only where a row is full.
    static func rows(of text: String, columns: Int) -> [String] {
        var rows: [String] = []
        var current = ""
        var used = 0
        for character in text {
            let w = TextWidth.columns(of: String(character))
            if used + w > columns, !current.isEmpty {
                rows.append(current)
                current = ""
                used = 0
            }
            current.append(character)
            used += w
        }
        if !current.isEmpty || rows.isEmpty { rows.append(current) }
        return rows
    }
}

extension Overlay.Kind {
    /// The keys the box answers to, on its bottom edge.
    var footer: String {
        switch self {
        case .confirmDelete: "y: yes, any other key: no"
        case .alertPermission: "y: yes, n or Esc: no"
        case .confirmQuit: "y: quit, any other key: stay"
        case .acceptRequest: "r: replace, n: new contact, any other key: not now"
        case .confirmDecline: "y: decline, any other key: keep it"
        case .help, .details, .code, .safety: "Esc closes; Up/Down scroll"
        case .search(let results): results.hits.isEmpty ? "Esc closes" : "Up/Down choose, Enter opens, Esc closes"
        }
    }
}
