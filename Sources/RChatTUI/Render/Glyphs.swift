import RChatCore

/// The characters the view draws with: Unicode in a UTF-8 locale (unless `glyphs ascii`),
/// ASCII otherwise. Every status differs from every other by glyph or attribute, never by
/// colour alone (NO_COLOR).
///
/// Every character outside ASCII here is one that DejaVu Sans Mono, Liberation Mono, Noto
/// Mono and xterm's misc-fixed (6x13, 9x18) all have, so no font Debian installs for
/// terminals draws an empty box (FontCoverageTests reads their charsets). They share no
/// clock, check mark, circle, arrow, block or box-drawing character: the clock is `…`
/// (still going), the tick `√`, a box is drawn with `+`, `―` and `|`.
public struct Glyphs: Sendable {
    public let isUnicode: Bool

    public static let unicode = Glyphs(isUnicode: true)
    public static let ascii = Glyphs(isUnicode: false)

    /// A status as drawn beside an outgoing message (at most two columns), and in the help
    /// legend: both draw what this returns.
    public func status(_ status: MessageStatus) -> (text: String, style: CellStyle) {
        switch status {
        case .sending: return (isUnicode ? "…" : "..", CellStyle(role: .quiet))
        case .sent: return (isUnicode ? "√" : "v", CellStyle())
        case .delivered: return (isUnicode ? "√√" : "vv", CellStyle(role: .good))
        // Filled: the two ticks cut out of a reversed block. Not bold: misc-fixed's bold
        // fonts (6x13B, 9x18B) have no `√`.
        case .read: return (isUnicode ? "√√" : "VV", CellStyle(reverse: true, role: .good))
        case .notConfirmed: return (isUnicode ? "…?" : ".?", CellStyle(underline: true, role: .warning))
        case .notDelivered: return ("!", CellStyle(bold: true, role: .danger))
        case .failedToSend: return (isUnicode ? "×!" : "x!", CellStyle(bold: true, reverse: true, role: .danger))
        }
    }

    public var vertical: String { "|" }
    /// U+2015: unlike `-` it reaches both edges of its cell, so a row of them is one line.
    public var horizontal: String { isUnicode ? "―" : "-" }
    public var topLeft: String { "+" }
    public var topRight: String { "+" }
    public var bottomLeft: String { "+" }
    public var bottomRight: String { "+" }
    public var ellipsis: String { isUnicode ? "…" : "..." }
    public var dash: String { isUnicode ? "—" : "-" }
    public var selection: String { isUnicode ? "»" : ">" }
    public var prompt: String { isUnicode ? "› " : "> " }
    public var separator: String { isUnicode ? " · " : " | " }
    /// Before a reply's quote of the message it answers.
    public var quoteMark: String { "| " }
    /// Before a system row.
    public var rowMark: String { isUnicode ? "•" : "*" }
    /// Before "Recording…" while `/voice` records.
    public var recording: String { isUnicode ? "•" : "*" }
    /// A line break in a one-line preview of several lines.
    public var lineBreak: String { isUnicode ? "¶" : "|" }
    /// Before the disappearing-message timer in the header: "timer 1 hour" (no font has a
    /// stopwatch).
    public var timer: String { "timer" }
    public var moreAbove: String { "^" }
    public var moreBelow: String { "v" }
    /// A progress bar's done and remaining cells.
    public var barDone: String { "#" }
    public var barLeft: String { isUnicode ? "·" : "-" }
}
