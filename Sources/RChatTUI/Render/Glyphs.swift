import RChatCore

/// The characters the view draws with: Unicode in a UTF-8 locale, ASCII otherwise. Every
/// status differs from every other by glyph or attribute, never by colour alone (NO_COLOR).
public struct Glyphs: Sendable {
    public let isUnicode: Bool

    public static let unicode = Glyphs(isUnicode: true)
    public static let ascii = Glyphs(isUnicode: false)

    /// A status as drawn beside an outgoing message (at most two columns).
    public func status(_ status: MessageStatus) -> (text: String, style: CellStyle) {
        switch status {
        case .sending: return (isUnicode ? "◷" : "..", CellStyle(role: .quiet))
        case .sent: return (isUnicode ? "✓" : "v", CellStyle())
        case .delivered: return (isUnicode ? "ⓥ" : "vv", CellStyle(role: .good))
        case .read: return (isUnicode ? "ⓥ" : "VV", CellStyle(bold: true, reverse: true, role: .good))
        case .notConfirmed: return (isUnicode ? "◷?" : ".?", CellStyle(underline: true, role: .warning))
        case .notDelivered: return ("!", CellStyle(bold: true, role: .danger))
        case .failedToSend: return (isUnicode ? "!" : "x!", CellStyle(bold: true, reverse: true, role: .danger))
        }
    }

    public var vertical: String { isUnicode ? "│" : "|" }
    public var horizontal: String { isUnicode ? "─" : "-" }
    public var topLeft: String { isUnicode ? "┌" : "+" }
    public var topRight: String { isUnicode ? "┐" : "+" }
    public var bottomLeft: String { isUnicode ? "└" : "+" }
    public var bottomRight: String { isUnicode ? "┘" : "+" }
    public var ellipsis: String { isUnicode ? "…" : "..." }
    public var selection: String { isUnicode ? "▶" : ">" }
    public var prompt: String { isUnicode ? "› " : "> " }
    public var separator: String { isUnicode ? " · " : " | " }
    public var dash: String { isUnicode ? "—" : "-" }
    public var rowMark: String { isUnicode ? "•" : "*" }
    public var recording: String { isUnicode ? "●" : "*" }
    public var lineBreak: String { isUnicode ? "⏎" : "|" }
    /// Before the disappearing-message timer in the header: "⏱ 1 hour".
    public var timer: String { isUnicode ? "⏱" : "timer" }
    public var moreAbove: String { isUnicode ? "▲" : "^" }
    public var moreBelow: String { isUnicode ? "▼" : "v" }
    /// A progress bar's done and remaining cells.
    public var barDone: String { isUnicode ? "█" : "#" }
    public var barLeft: String { isUnicode ? "░" : "-" }
}
