import Glibc
import CWidth

/// How many terminal columns text takes, and what is sent to the terminal to draw it.
///
/// Every grapheme cluster is one unit: wrapping, truncation, padding, the composer's cursor
/// and the view's cells never split one. A cluster's width is the C library's `wcswidth`
/// of its code points (looked up in a UTF-8 locale of our own, so it does not depend on the
/// process locale): that is what ncurses places characters by, and what terminals that
/// follow the C library draw (xterm, VTE, screen, tmux 3.3, which `TmuxScreens` tests run
/// in). Terminals that measure whole emoji sequences (kitty, WezTerm, foot, iTerm2, tmux
/// 3.4 and later) disagree on a few sequences, so those are sent in a form both kinds draw
/// at the same width (`terminalForm`):
///
/// | cluster | `wcswidth` | sent as | why |
/// |---|---|---|---|
/// | emoji + VS15/VS16 (`❤️`, `😀︎`, keycap `1️⃣`) | the base's (1 or 2) | without the selector (`❤`, `😀`, `1⃣`) | a selector only asks for a presentation; with VS16 a text-default emoji is 1 column to the C library and tmux 3.3 but 2 to emoji-aware terminals |
/// | ZWJ sequence (`👨‍👩‍👧`) | the sum of its pictures (6) | the pictures side by side, no joiners (`👨👩👧`) | tmux 3.3 and emoji-aware terminals join it into 2 columns, the C library (and ncurses) count 6 |
/// | emoji + skin tone (`👍🏽`) | 4 (two wide pictures) | as it is | the C library, ncurses and tmux 3.3 give 4; emoji-aware terminals join it into 2 and the rest of that row would start 2 columns early there (no form keeps the tone without a visible gap) |
/// | tag sequence (`🏴󠁧󠁢󠁳󠁣󠁴󠁿`) | the flag's (2) | without the tags (`🏴`) | invisible; a cell of ncurses holds a base and four marks only |
/// | flag (`🇫🇷`) | 2 | as it is | everyone draws 2 |
///
/// Where the C library has no answer, or a cluster could not be drawn in its columns, the
/// width differs from `wcswidth` on purpose: a lone regional indicator (1 to the C library,
/// 2 to emoji-aware terminals), a code point this C library does not know (-1: tmux 3.3
/// draws nothing, newer terminals 2) and a cluster wider than `widest` columns are all
/// shown as `�`, 1 column; a mark with no base gets a dotted circle (1, not 0); controls and
/// other characters a terminal would act on are `TerminalText`'s stand-ins (1, not -1);
/// zero-width format characters that are kept (joiners, the soft hyphen, a lone selector)
/// are not drawn (0; `wcwidth` says 1 for the soft hyphen). `TextWidthTests` compares every
/// sample with the C library.
public enum TextWidth {
    /// A UTF-8 LC_CTYPE for wcwidth, made once; nil if the system has no C.UTF-8.
    /// `nonisolated(unsafe)`: `locale_t` is a C pointer, which Swift cannot call Sendable,
    /// but this one is never changed or freed after it is made, and glibc's `wcwidth`
    /// only reads it, from any thread.
    nonisolated(unsafe) private static let utf8Locale: locale_t? = newlocale(Int32(LC_CTYPE_MASK), "C.UTF-8", nil)

    /// The widest cluster drawn as itself; a wider one is hostile or broken (a thousand
    /// conjoining jamo are one cluster) and is shown as `�`.
    public static let widest = 16

    /// Columns of one grapheme as drawn (0 only for what is not drawn at all).
    public static func columns(of ch: Character) -> Int { displayed(ch, asciiOnly: false).1 }

    /// Columns of a whole string, grapheme by grapheme, as `displayed` would draw it.
    public static func columns(of text: some StringProtocol) -> Int {
        var total = 0
        for ch in text { total += displayed(ch, asciiOnly: false).1 }
        return total
    }

    /// What a cell shows for a grapheme, and its width: what a terminal would act on
    /// (controls, escapes, direction overrides and isolates) is shown as `TerminalText`'s
    /// visible stand-in, one column (a message can never move the cursor, inject escapes or
    /// reorder the line); a mark with nothing to combine with gets a dotted circle; what
    /// cannot be drawn in known columns is `�`; and in ASCII mode anything beyond ASCII is `?`.
    public static func displayed(_ ch: Character, asciiOnly: Bool) -> (Character, Int) {
        let scalars = ch.unicodeScalars
        let first = scalars.first!
        if scalars.count == 1, first.value >= 0x20, first.value < 0x7F { return (ch, 1) }
        if ch == "\t" { return (" ", 1) }
        if let standIn = scalars.lazy.compactMap(TerminalText.standIn(for:)).first {
            return (asciiOnly ? "?" : Character(standIn), 1)
        }
        if scalars.allSatisfy({ $0.properties.generalCategory == .format || $0.properties.isDefaultIgnorableCodePoint }) {
            return (ch, 0)   // joiners, the soft hyphen, a lone selector: not drawn
        }
        if asciiOnly { return (asciiStandIn(first), 1) }
        let replacement = Character(TerminalText.replacementCharacter)
        if scalars.count == 1, isRegionalIndicator(first) { return (replacement, 1) }
        var width = 0
        for scalar in terminalScalars(ch) {
            let w = cWidth(scalar)
            if w < 0 { return (replacement, 1) }
            width += w
        }
        if width == 0 {
            // A mark on a dotted circle — unless the two are not one cluster (a lone Hangul
            // vowel or final consonant has no columns but joins nothing before it).
            let onCircle = "\u{25CC}" + String(ch)
            return onCircle.count == 1 ? (Character(onCircle), 1) : (replacement, 1)
        }
        if width > widest { return (replacement, 1) }
        return (ch, width)
    }

    /// The code points sent to the terminal for a cluster `displayed` gave: the same
    /// columns to the C library (and ncurses) as to terminals that measure emoji sequences
    /// (the table at the top).
    public static func terminalForm(of ch: Character) -> String {
        var out = String.UnicodeScalarView()
        out.append(contentsOf: terminalScalars(ch))
        return String(out)
    }

    /// Text as `rchat`'s command lines print it for a terminal: each grapheme as the view
    /// draws it (stand-ins, `terminalForm`), so that `columns(of:)` of the original is the
    /// width a terminal gives the result.
    public static func drawn(_ text: String) -> String {
        var out = ""
        for ch in text {
            let (shown, width) = displayed(ch, asciiOnly: false)
            if width > 0 { out += terminalForm(of: shown) }
        }
        return out
    }

    /// `drawn(text)` followed by spaces up to `width` columns (never cut): for columns of
    /// names in command-line output.
    public static func padded(_ text: String, to width: Int) -> String {
        drawn(text) + String(repeating: " ", count: max(0, width - columns(of: text)))
    }

    private static func terminalScalars(_ ch: Character) -> [Unicode.Scalar] {
        let scalars = Array(ch.unicodeScalars)
        guard scalars.count > 1, scalars.contains(where: { !$0.isASCII }) else { return scalars }
        let emoji = scalars[0].properties.isEmoji
        var out: [Unicode.Scalar] = []
        for scalar in scalars {
            switch scalar.value {
            case 0xFE0E, 0xFE0F, 0xE0020...0xE007F: continue
            case 0x200D where emoji: continue
            default: break
            }
            out.append(scalar)
        }
        return out
    }

    private static func isRegionalIndicator(_ s: Unicode.Scalar) -> Bool { (0x1F1E6...0x1F1FF).contains(s.value) }

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

    /// The C library's width of one code point in a UTF-8 locale (-1: not printable or not
    /// known to this C library).
    public static func cWidth(_ s: Unicode.Scalar) -> Int {
        Int(rchat_wcwidth_in(utf8Locale, s.value))
    }
}
