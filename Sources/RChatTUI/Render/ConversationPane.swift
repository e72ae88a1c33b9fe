import RChatCore

/// Lays out the open conversation: each item as lines (day separator, time, who, wrapped
/// text, the status glyph at the right edge of every outgoing message, a quiet `Resent`
/// and a Resend hint under it, the New line above the first message unread at open), then
/// stacks lines upward from the anchor.
struct ConversationPane {
    let width: Int
    let height: Int
    let glyphs: Glyphs
    let time: TimeText
    let contact: String
    /// In a group: the widest name the column must hold (its members', "You"); nil: `contact`.
    var widestName: String? = nil
    let selected: Int?
    /// The item the New line is drawn above.
    let newLine: Int?
    /// How fast the attachments that move are moving, as the view measured it.
    var rates = TransferRates()
    /// Photos' previews, ready to draw (a photo without one has no preview rows yet).
    var previews: [MessageID: ShownPreview] = [:]
    /// Voice messages' lengths, where read.
    var durations: [MessageID: Double] = [:]

    static let timeColumn = 1
    static let nameColumn = 7
    var nameWidth: Int { min(max(3, TextWidth.columns(of: widestName ?? contact)), max(3, width / 6)) }
    var textColumn: Int { Self.nameColumn + nameWidth + 1 }
    /// Text stops three columns short of the edge: a space and the two-column status.
    var textWidth: Int { max(4, width - textColumn - 3) }
    var statusColumn: Int { width - 2 }

    func lines(of index: Int, in window: ConversationWindow) -> [PaneLine] {
        guard let item = window.item(at: index) else { return [] }
        var out: [PaneLine] = []
        let at = item.at
        if index == 0 || window.item(at: index - 1).map({ time.day($0.at) != time.day(at) }) == true {
            out.append(rule(time.date(at), item: index, .dim))
        }
        if index == newLine { out.append(rule("New", item: index, CellStyle(bold: true, role: .accent))) }
        var body: [PaneLine]
        switch item {
        case .message(let m):
            if case .attachment(let a) = m.content { body = attachmentLines(m, a, index: index) }
            else if m.showsAsRow { body = rowLines(m.text, at: m.at, action: nil, index: index) }
            else { body = messageLines(m, index: index) }
        case .row(let r): body = rowLines(r.text, at: r.at, action: r.action, index: index)
        }
        // Its reactions, under it: "👍 2  ❤️ 1" (`i` says who).
        if case .message(let m) = item, !m.reactions.isEmpty, !m.showsAsRow {
            var line = PaneLine(item: index)
            line.add(textColumn, Wrap.truncate(TerminalText.sanitized(m.reactionSummary, breaks: .shown), width: textWidth,
                                               ellipsis: glyphs.ellipsis))
            body.append(line)
        }
        if selected == index {
            for i in body.indices { body[i].add(0, glyphs.selection, .bold) }
        }
        return out + body
    }

    /// `── label ──` across the pane: a day's date, the New line.
    private func rule(_ label: String, item index: Int, _ style: CellStyle) -> PaneLine {
        var line = PaneLine(item: index)
        let label = " \(label) "
        let side = max(0, (width - TextWidth.columns(of: label)) / 2)
        line.add(0, String(repeating: glyphs.horizontal, count: side) + label
                    + String(repeating: glyphs.horizontal, count: side), style)
        return line
    }

    private func messageLines(_ m: MessageItem, index: Int) -> [PaneLine] {
        let text = Wrap.lines(m.text, width: textWidth)
        var out: [PaneLine] = []
        // A reply: its first line is the quote, cut to one line, the text under it.
        if let quote = m.quote {
            var line = firstLine(of: m, index: index)
            let words = Wrap.truncate(glyphs.quoteMark + TerminalText.sanitized(quote.words, breaks: .shown), width: textWidth,
                                      ellipsis: glyphs.ellipsis)
            line.add(textColumn, words, .dim)
            out.append(line)
        }
        for (n, part) in text.enumerated() {
            var line = n == 0 && out.isEmpty ? firstLine(of: m, index: index) : PaneLine(item: index)
            // Deleted for everyone: its place, quietly.
            line.add(textColumn, part, m.isUnsent ? .dim : .plain)
            out.append(line)
        }
        out += notesLines(m, index: index)
        return out
    }

    /// A message's first line before its text: the time, who wrote it, and for an outgoing
    /// one its status at the right edge.
    func firstLine(of m: MessageItem, index: Int) -> PaneLine {
        let outgoing = m.direction == .outgoing
        var line = PaneLine(item: index)
        line.add(Self.timeColumn, time.clock(m.at), .dim)
        // In a group, who wrote it.
        let who = Wrap.truncate(outgoing ? "You" : TerminalText.sanitized(m.author ?? contact, breaks: .shown), width: nameWidth, ellipsis: glyphs.ellipsis)
        // A group's authors each in their own colour; a contact's name in the accent.
        let style = outgoing ? CellStyle.dim : CellStyle(bold: true, role: m.author.map { ColorRole.member(named: $0) } ?? .accent)
        line.add(Self.nameColumn, who, style)
        if outgoing, let status = m.status {
            let g = glyphs.status(status)
            line.add(statusColumn, g.text, g.style)
        }
        return line
    }

    /// The quiet line under a message: `Resent`, and the status and Resend hint when it may
    /// not have arrived, or what rChat holds it back for; none when there is nothing to say.
    /// Notes that do not fit the text's width go on the next line.
    func notesLines(_ m: MessageItem, index: Int) -> [PaneLine] {
        let outgoing = m.direction == .outgoing
        var notes: [(String, CellStyle)] = []
        if m.isEdited { notes.append(("edited", .dim)) }
        // This side's edit or delete on its way: "edit Sending"; one that may not have
        // arrived in the danger colour, as a message's own status would be.
        if let pending = m.pendingAction {
            notes.append((pending.words, pending.status.offersResend ? CellStyle(bold: true, role: .danger) : .dim))
        }
        if m.resent { notes.append(("Resent", .dim)) }
        // In a group where members differ: how many reached the furthest status ("√√ 3/5").
        if outgoing, let reached = Self.furthest(m.deliveries) {
            let g = glyphs.status(reached.status)
            notes.append(("\(g.text) \(reached.count)/\(reached.of)", g.style))
        }
        if outgoing, let status = m.status, status.offersResend {
            notes.append((status.rawValue, CellStyle(bold: true, role: .danger)))
            notes.append(("[r] Resend", .bold))
        } else if outgoing, m.pendingAction?.status.offersResend == true {
            notes.append(("[r] Resend", .bold))
        } else if outgoing, let waiting = m.waitingText {
            notes.append((TerminalText.sanitized(waiting, breaks: .shown), CellStyle(role: .warning)))
            notes.append(("[r] Resend", .bold))
        }
        var lines: [PaneLine] = []
        var line = PaneLine(item: index)
        var col = textColumn
        for note in notes {
            let width = TextWidth.columns(of: note.0)
            if col > textColumn {
                if col + TextWidth.columns(of: glyphs.separator) + width > textColumn + textWidth {
                    lines.append(line)
                    line = PaneLine(item: index)
                    col = textColumn
                } else {
                    line.add(col, glyphs.separator, .dim)
                    col += TextWidth.columns(of: glyphs.separator)
                }
            }
            line.add(col, note.0, note.1)
            col += width
        }
        if col > textColumn { lines.append(line) }
        return lines
    }

    /// The furthest status some of a group message's current members reached, how many
    /// reached it, of how many: nil for one delivery, or when all are at the same.
    static func furthest(_ deliveries: [MessageItem.MemberDelivery]?) -> (status: MessageStatus, count: Int, of: Int)? {
        let current = (deliveries ?? []).filter(\.isCurrent).map(\.status)
        guard current.count > 1, Set(current).count > 1,
              let top = current.max(by: { DeliverySummary.rank($0) < DeliverySummary.rank($1) }) else { return nil }
        return (top, current.filter { $0 == top }.count, current.count)
    }

    /// A system row, or a message this version cannot show (a timer change), which reads as one.
    private func rowLines(_ rowText: String, at: Int64, action: SystemRow.Action?, index: Int) -> [PaneLine] {
        let column = Self.nameColumn + 2
        let text = Wrap.lines(rowText, width: max(4, width - column - 1))
        var out: [PaneLine] = []
        for (n, part) in text.enumerated() {
            var line = PaneLine(item: index)
            if n == 0 {
                line.add(Self.timeColumn, time.clock(at), .dim)
                line.add(Self.nameColumn, glyphs.rowMark, CellStyle(bold: true, role: .warning))
            }
            line.add(column, part, CellStyle(role: .warning))
            out.append(line)
        }
        if action == .resend {
            var line = PaneLine(item: index)
            line.add(column, "[r] Resend", .bold)
            out.append(line)
        }
        return out
    }

    /// The pane's lines, top to bottom, ending with the anchor's bottom line (the newest
    /// line when following). Fewer than `height` when the conversation is short.
    func stack(_ window: ConversationWindow, anchor: Anchor?) -> [PaneLine] {
        guard !window.items.isEmpty, height > 0 else { return [] }
        var index = min(max(anchor?.item ?? window.end - 1, window.start), window.end - 1)
        var reversed: [PaneLine] = []
        let own = lines(of: index, in: window)
        let below = min(anchor?.linesBelow ?? 0, max(0, own.count - 1))
        reversed.append(contentsOf: own.dropLast(below).reversed())
        while reversed.count < height && index > window.start {
            index -= 1
            reversed.append(contentsOf: lines(of: index, in: window).reversed())
        }
        return Array(reversed.prefix(height).reversed())
    }

    /// The anchor that puts the first line of `index` at the top of the pane, or nil
    /// (follow the newest) when everything from there fits.
    func anchorShowing(top index: Int, in window: ConversationWindow) -> Anchor? {
        var used = 0
        var i = max(index, window.start)
        while i < window.end {
            let count = lines(of: i, in: window).count
            if used + count >= height {
                return Anchor(item: i, linesBelow: used + count - height)
            }
            used += count
            i += 1
        }
        return window.reachesNewest ? nil : Anchor(item: window.end - 1, linesBelow: 0)
    }
}
