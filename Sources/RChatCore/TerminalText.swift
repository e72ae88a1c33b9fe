/// Text other people wrote (contact names, messages, system rows naming them) made safe for
/// a terminal. Every character that could move the cursor, start an escape sequence, ring
/// the bell, change the terminal's title or reorder what follows it is shown as a visible
/// stand-in instead; nothing is dropped silently. Pure: every output seam (`rchat list`,
/// `contacts`, `check --print`, alerts, the view, error lines) goes through it.
///
/// What is replaced, and by what:
///
/// | characters | stand-in |
/// |---|---|
/// | C0 controls U+0000–U+001F (ESC, BEL, CR, …) | their Control Picture, U+2400–U+241F (`␛`, `␇`, `␍`) |
/// | DEL U+007F | `␡` U+2421 |
/// | C1 controls U+0080–U+009F (CSI U+009B, OSC U+009D, NEL, …) | `�` U+FFFD |
/// | direction marks, embeddings, overrides and isolates: U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069 | `�` |
/// | every other format character (general category Cf: zero-width space, word joiner, byte order mark, invisible operators, interlinear annotation, …) | `�` |
///
/// Kept as they are, because text needs them and they cannot move anything: the zero-width
/// joiners U+200C/U+200D (scripts, emoji sequences), the soft hyphen U+00AD, the tag
/// characters U+E0020–U+E007F (subdivision flags such as England's) and the prepended
/// concatenation marks (visible Arabic, Syriac and Kaithi number signs).
///
/// Line breaks and tabs depend on where the text goes (`Breaks`).
public enum TerminalText {
    public enum Breaks: Sendable {
        /// Multi-line text (a message in human output): `\n` and `\t` stay; `\r\n`, U+2028
        /// and U+2029 become `\n`; a lone `\r` (which would overwrite the line) is `␍`.
        case kept
        /// One field on one line (a name, a `TITLE<TAB>TEXT` field, an error): line breaks
        /// are `␤` U+2424 (`\r\n` counts once) and a tab is `␉` U+2409, so they can never
        /// split a line or a field.
        case shown
    }

    public static let replacementCharacter: Unicode.Scalar = "\u{FFFD}"
    public static let lineBreakPicture: Unicode.Scalar = "\u{2424}"

    /// The visible stand-in for a scalar that must not reach a terminal as it is, or nil
    /// when it may. Line breaks and tabs get their Control Picture here; `sanitized` decides
    /// whether they are kept.
    public static func standIn(for scalar: Unicode.Scalar) -> Unicode.Scalar? {
        switch scalar.value {
        case 0x00...0x1F: return Unicode.Scalar(0x2400 + scalar.value)
        case 0x7F: return "\u{2421}"
        case 0x80...0x9F: return replacementCharacter
        case 0x2028, 0x2029: return lineBreakPicture
        case 0x200C, 0x200D, 0x00AD, 0xE0020...0xE007F: return nil
        case 0x0600...0x0605, 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD: return nil
        default: return scalar.properties.generalCategory == .format ? replacementCharacter : nil
        }
    }

    /// Whether the text can go to a terminal unchanged in this mode.
    public static func isSafe(_ text: String, breaks: Breaks) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            guard standIn(for: scalar) != nil else { return true }
            return breaks == .kept && (scalar == "\n" || scalar == "\t")
        }
    }

    /// The text with every unsafe character replaced by its stand-in.
    public static func sanitized(_ text: String, breaks: Breaks) -> String {
        if isSafe(text, breaks: breaks) { return text }
        var out = String.UnicodeScalarView()
        var scalars = text.unicodeScalars.makeIterator()
        var next = scalars.next()
        while let scalar = next {
            next = scalars.next()
            switch (scalar, breaks) {
            case ("\r", _) where next == "\n":
                continue   // CRLF is one line break: the "\n" that follows stands for it
            case ("\n", .kept), ("\t", .kept):
                out.append(scalar)
            case ("\u{2028}", .kept), ("\u{2029}", .kept):
                out.append("\n")
            case ("\n", .shown):
                out.append(lineBreakPicture)
            default:
                out.append(standIn(for: scalar) ?? scalar)
            }
        }
        return String(out)
    }
}
