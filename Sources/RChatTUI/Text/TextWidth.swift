import Glibc
import CNcursesw
import RChatCore

/// How many terminal columns text takes. Per grapheme: the base scalar's `wcwidth` (looked
/// up in a UTF-8 locale of our own, so the answer does not depend on the process locale),
/// combining marks add nothing, and emoji sequences and flags take two columns because
/// terminals draw them that way.
public enum TextWidth {
    /// A UTF-8 LC_CTYPE for wcwidth, made once; nil if the system has no C.UTF-8.
    /// `nonisolated(unsafe)`: `locale_t` is a C pointer, which Swift cannot call Sendable,
    /// but this one is never changed or freed after it is made, and glibc's `wcwidth_l`
    /// only reads it, from any thread.
    nonisolated(unsafe) private static let utf8Locale: locale_t? = newlocale(Int32(LC_CTYPE_MASK), "C.UTF-8", nil)

    /// Columns of one grapheme as drawn (0 only for what is not drawn at all).
    public static func columns(of ch: Character) -> Int {
        let scalars = ch.unicodeScalars
        let first = scalars.first!
        if scalars.count == 1, first.value >= 0x20, first.value < 0x7F { return 1 }
        if (0x1F1E6...0x1F1FF).contains(first.value) { return 2 }   // a flag, or half of one
        if first.properties.isEmojiPresentation { return 2 }
        if first.properties.isEmoji, scalars.contains(where: { $0.value == 0xFE0F || $0.value == 0x200D || $0.properties.isEmojiModifier }) {
            return 2
        }
        let w = scalarWidth(first)
        return w < 0 ? 1 : w
    }

    /// Columns of a whole string, grapheme by grapheme, as `displayed` would draw it.
    public static func columns(of text: some StringProtocol) -> Int {
        var total = 0
        for ch in text { total += displayed(ch, asciiOnly: false).1 }
        return total
    }

    /// What a cell shows for a grapheme, and its width: what a terminal would act on
    /// (controls, escapes, direction overrides and isolates) is shown as `TerminalText`'s
    /// visible stand-in, one column (a message can never move the cursor, inject escapes or
    /// reorder the line); a mark with nothing to combine with gets a dotted circle, and in
    /// ASCII mode anything beyond ASCII is `?`.
    public static func displayed(_ ch: Character, asciiOnly: Bool) -> (Character, Int) {
        let scalars = ch.unicodeScalars
        let first = scalars.first!
        if scalars.count == 1, first.value >= 0x20, first.value < 0x7F { return (ch, 1) }
        if ch == "\t" { return (" ", 1) }
        if let standIn = scalars.lazy.compactMap(TerminalText.standIn(for:)).first {
            return (asciiOnly ? "?" : Character(standIn), 1)
        }
        if scalars.allSatisfy({ $0.properties.generalCategory == .format || $0.properties.isDefaultIgnorableCodePoint }) {
            return (ch, 0)   // zero-width joiners and other ignorables: not drawn
        }
        if asciiOnly { return (asciiStandIn(first), 1) }
        let w = columns(of: ch)
        if w == 0 { return (Character("\u{25CC}" + String(ch)), 1) }
        return (ch, w)
    }

    /// Typographic punctuation has a faithful ASCII form; anything else is `?`.
    private static func asciiStandIn(_ s: Unicode.Scalar) -> Character {
        switch s.value {
        case 0x2018, 0x2019, 0x2032: return "'"
        case 0x201C, 0x201D, 0x2033: return "\""
        case 0x2010...0x2015, 0x2212: return "-"
        case 0x00A0, 0x2000...0x200A: return " "
        case 0x2022, 0x00B7: return "*"
        default: return "?"
        }
    }

    private static func scalarWidth(_ s: Unicode.Scalar) -> Int {
        if let loc = utf8Locale {
            let old = uselocale(loc)
            defer { uselocale(old) }
            return Int(rchat_wcwidth(s.value))
        }
        return Int(rchat_wcwidth(s.value))
    }
}
