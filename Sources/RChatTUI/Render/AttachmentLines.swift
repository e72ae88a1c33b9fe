import RChatCore

/// An attachment in the conversation: a message line with its kind, name and size (the
/// status glyph at the edge as for text), then while it moves a progress bar with percent
/// and rate, or why it was discarded; a complete photo's preview under it.
extension ConversationPane {
    /// The widest and tallest a photo's preview is drawn.
    static let previewColumns = 40
    static let previewRows = 8

    /// The box a preview is rendered into in this pane: up to 40 columns (the text's width
    /// when narrower) and up to 8 rows (half the pane when lower).
    var previewBox: (columns: Int, rows: Int) {
        (min(Self.previewColumns, textWidth), min(Self.previewRows, max(2, height / 2)))
    }

    func attachmentLines(_ m: MessageItem, _ a: Attachment, index: Int) -> [PaneLine] {
        var first = firstLine(of: m, index: index)
        var column = textColumn
        for (text, style) in headline(a, length: durations[m.id]) {
            first.add(column, text, style)
            column += TextWidth.columns(of: text)
        }
        var out = [first]
        switch m.transfer {
        case .moving(let done, let waiting)?:
            var line = PaneLine(item: index)
            var column = textColumn
            // What it waits for, in place of a rate that would only say 0 B/s.
            let why = waiting.map { $0.words(contact: TerminalText.sanitized(contact, breaks: .shown)) }
            for (text, style) in progress(done: min(done, a.size), of: a.size, rate: rates.rate(of: m.id), waiting: why) {
                line.add(column, text, style)
                column += TextWidth.columns(of: text)
            }
            out.append(line)
        case .discarded(let reason)?:
            for part in Wrap.lines(TerminalText.sanitized(reason, breaks: .shown), width: textWidth) {
                var line = PaneLine(item: index)
                line.add(textColumn, part, CellStyle(role: .warning))
                out.append(line)
            }
        case .complete?, nil:
            break
        }
        if case .complete? = m.transfer, a.kind == .photo, let preview = previews[m.id] {
            out += previewLines(preview, index: index)
        }
        out += notesLines(m, index: index)
        return out
    }

    /// `Photo · name · 1.2 MB` (`Voice message 0:05 · …` once its length is known) in the
    /// text's width: the name (display text, control characters shown as stand-ins) is what
    /// gives way, cut with an ellipsis, and goes when not even two columns of it fit.
    func headline(_ a: Attachment, length: Double? = nil) -> [(String, CellStyle)] {
        let label = a.kind.title + (length.map { " " + TimeText.length($0) } ?? "")
        let size = ByteCount.display(a.size)
        let sep = glyphs.separator
        let fixed = TextWidth.columns(of: label) + 2 * TextWidth.columns(of: sep) + TextWidth.columns(of: size)
        let room = textWidth - fixed
        guard room >= 2 else {
            let short = Wrap.truncate(label + sep + size, width: textWidth, ellipsis: glyphs.ellipsis)
            return [(short, .bold)]
        }
        let name = Wrap.truncate(TerminalText.sanitized(a.name, breaks: .shown), width: room, ellipsis: glyphs.ellipsis)
        return [(label, .bold), (sep, .dim), (name, .plain), (sep, .dim), (size, .dim)]
    }

    /// `████░░░░ 42% · 1.3 MB/s`: the bar takes what the percent and rate leave (at most 24
    /// columns) and goes when fewer than 4 are left; the rate only once it was measured.
    /// A file that waits says for what instead of a rate: `42% · waiting for room at the relay`.
    func progress(done: UInt64, of size: UInt64, rate: Double?, waiting: String? = nil) -> [(String, CellStyle)] {
        let percent = size == 0 ? 100 : Int(done * 100 / size)
        var tail = "\(percent)%"
        if let waiting { tail += glyphs.separator + waiting } else if let rate { tail += glyphs.separator + ByteCount.rate(rate) }
        let barWidth = min(24, textWidth - TextWidth.columns(of: tail) - 1)
        guard barWidth >= 4 else {
            return [(Wrap.truncate(tail, width: textWidth, ellipsis: glyphs.ellipsis), .dim)]
        }
        let filled = size == 0 ? barWidth : Int(done * UInt64(barWidth) / size)
        return [(String(repeating: glyphs.barDone, count: filled), CellStyle(role: .accent)),
                (String(repeating: glyphs.barLeft, count: barWidth - filled), .dim),
                (" " + tail, .plain)]
    }

    private func previewLines(_ preview: ShownPreview, index: Int) -> [PaneLine] {
        switch preview {
        case .cells(let rows):
            return rows.map { runs in
                var line = PaneLine(item: index)
                for run in runs { line.add(textColumn + run.column, run.text, run.style) }
                return line
            }
        case .graphics(var image):
            var lines = (0..<image.rows).map { _ in PaneLine(item: index) }
            image.column = textColumn
            lines[0].image = image
            return lines
        }
    }
}
