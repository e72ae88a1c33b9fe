import CNcursesw
import RChatCore
@testable import RChatTUI

/// What a terminal sends, as curses hands it over: each UTF-8 scalar a character code, and
/// the private-use scalars U+E000… a function key code (KEY_MIN…), so that the input reaches
/// both of `KeyDecoder`'s doors.
enum TerminalInput {
    static let functionKeyBase: UInt32 = 0xE000

    static func keys(_ input: [UInt8]) -> [Key] {
        String(decoding: input, as: UTF8.self).unicodeScalars.compactMap { scalar in
            let value = scalar.value
            if value >= functionKeyBase, value < functionKeyBase + 0x200 { return KeyDecoder.functionKey(Int32(value - functionKeyBase)) }
            return KeyDecoder.character(value)
        }
    }

    /// Keys as the curses backend folds them: escape sequences, then bracketed paste.
    static func folded(_ input: [UInt8], paste: inout BracketedPaste) -> [Key] {
        paste.fold(KeyDecoder.folding(keys(input)))
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
}

/// The view's key decoder: terminal bytes to keys (escape sequences, mouse reports, focus,
/// Alt), then to the key map's commands in every focus.
enum KeyDecoderTarget: FuzzTarget {
    static let name = "keys"

    static func run(_ input: [UInt8]) {
        var paste = BracketedPaste()
        let keys = TerminalInput.folded(input, paste: &paste)
        for key in keys {
            for focus in Focus.allCases {
                _ = KeyMap.command(for: key, focus: focus, composerEmpty: input.count % 2 == 0)
            }
        }
    }

    static func seeds() -> [[UInt8]] {
        let escape = "\u{1B}"
        var seeds = KeyDecoder.escapeSequences.map { TerminalInput.bytes(escape + $0.bytes) }
        seeds += KeyDecoder.focusSequences.map { TerminalInput.bytes(escape + $0.bytes) }
        seeds += KeyDecoder.wordSequences.map { TerminalInput.bytes(escape + $0.bytes) }
        seeds.append(TerminalInput.bytes("\(escape)[<0;12;5M\(escape)[<64;3;4m"))       // SGR mouse: click, wheel
        seeds.append(TerminalInput.bytes("hello\r\u{7F}\(escape)x\u{01}"))
        var functionKeys = ""
        for code in [KEY_UP, KEY_DOWN, KEY_RESIZE, KEY_F0 + 5] { functionKeys.unicodeScalars.append(Unicode.Scalar(TerminalInput.functionKeyBase + UInt32(code))!) }
        seeds.append(TerminalInput.bytes(functionKeys))
        return seeds
    }
}

/// Pasted text: a bracketed paste folded into characters, typed into the composer (every
/// edit the key map gives it), laid out in rows of the terminal's width, and read as a
/// contact code as /add reads it.
enum PastedTextTarget: FuzzTarget {
    static let name = "paste"

    static func run(_ input: [UInt8]) {
        var paste = BracketedPaste()
        var composer = Composer()
        for key in TerminalInput.folded(input, paste: &paste) {
            switch KeyMap.command(for: key, focus: .composer, composerEmpty: composer.isEmpty) {
            case .type(let c): composer.apply(.insert(c))
            case .edit(let edit): composer.apply(edit)
            case .submit: _ = composer.take()
            default: break
            }
        }
        // At least as wide as the widest grapheme (which goes alone on a row).
        let width = TextWidth.widest + Int(input.first ?? 0) % 100
        let rows = ComposerRows(composer.characters, cursor: composer.cursor, width: width)
        precondition(rows.cursor.column < width, "the composer's cursor is past the edge")
        precondition(rows.lines.allSatisfy { $0.reduce(0) { $0 + TextWidth.displayed($1, asciiOnly: false).1 } <= width },
                     "a composer row is wider than the terminal")
        _ = composer.kept
        _ = try? ContactCode(parsing: composer.text)
        _ = TerminalText.sanitized(composer.text, breaks: .kept)
    }

    static func seeds() -> [[UInt8]] {
        let start = "\u{1B}[200~", end = "\u{1B}[201~"
        return [TerminalInput.bytes("\(start)line one\r\nline two\ttabbed 漢字 👍🏽\(end)"),
                TerminalInput.bytes("\(start)\(Fixtures.code("Alice", Fixtures.alice, Fixtures.aliceDevice).text)\(end)"),
                TerminalInput.bytes("typed\(start)pasted\u{07}\u{1B}[31mred\(end)after\r")]
    }
}
