import RChatCore

/// Fitting text into columns: wrapping by display width (never splitting a grapheme,
/// preferring to break after a space) and truncating with an ellipsis.
public enum Wrap {
    /// Lines of at most `width` columns. Newlines in the text are kept as line breaks; a
    /// word longer than a line is split between graphemes. Empty text gives one empty line.
    public static func lines(_ text: String, width: Int) -> [String] {
        let width = max(1, width)
        var out: [String] = []
        for paragraph in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            wrapParagraph(paragraph, width: width, into: &out)
        }
        return out.isEmpty ? [""] : out
    }

    private static func wrapParagraph(_ paragraph: Substring, width: Int, into out: inout [String]) {
        var line: [(Character, Int)] = []
        var used = 0
        // Index in `line` just after the last space: where the line may break.
        var breakAt: Int?
        // A line started by wrapping drops its leading spaces; a paragraph keeps its indent.
        var wrapped = false
        for ch in paragraph {
            let w = TextWidth.displayed(ch, asciiOnly: false).1
            if ch == " " && line.isEmpty && wrapped { continue }
            if used + w > width {
                if let b = breakAt, b < line.count, ch != " " {
                    out.append(trimmed(line[..<b]))
                    line = Array(line[b...])
                } else {
                    out.append(trimmed(line[...]))
                    line = []
                }
                used = line.reduce(0) { $0 + $1.1 }
                breakAt = nil
                wrapped = true
                if ch == " " && line.isEmpty { continue }
            }
            line.append((ch, w))
            used += w
            if ch == " " { breakAt = line.count }
        }
        out.append(trimmed(line[...]))
    }

    private static func trimmed(_ part: ArraySlice<(Character, Int)>) -> String {
        var s = String(part.map(\.0))
        while s.last == " " { s.removeLast() }
        return s
    }

    /// The text cut to `width` columns, ending in `ellipsis` when it had to be cut.
    public static func truncate(_ text: String, width: Int, ellipsis: String = "…") -> String {
        guard width > 0 else { return "" }
        if TextWidth.columns(of: text) <= width { return text }
        let ellipsisWidth = TextWidth.columns(of: ellipsis)
        guard ellipsisWidth <= width else { return String(repeating: ".", count: width) }
        var out = ""
        var used = 0
        for ch in text {
            let w = TextWidth.displayed(ch, asciiOnly: false).1
            if used + w > width - ellipsisWidth { break }
            out.append(ch); used += w
        }
        return out + ellipsis
    }

    /// The text padded with spaces (or truncated) to exactly `width` columns.
    public static func pad(_ text: String, width: Int, ellipsis: String = "…") -> String {
        let cut = truncate(text, width: width, ellipsis: ellipsis)
        return cut + String(repeating: " ", count: max(0, width - TextWidth.columns(of: cut)))
    }
}
