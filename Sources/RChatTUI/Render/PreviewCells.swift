import RChatCore

/// A preview as the conversation shows it under a photo's line.
public enum ShownPreview: Equatable, Sendable {
    /// Character cells, row by row: runs of text in one style (with the image's colours),
    /// each at its column from the preview's left edge.
    case cells([[PreviewRun]])
    /// A sixel or kitty image, drawn by the terminal over `rows` × `columns` blank cells.
    case graphics(ScreenImage)

    public var rows: Int {
        switch self {
        case .cells(let rows): rows.count
        case .graphics(let image): image.rows
        }
    }
}

/// Text in one style at a column of a preview row.
public struct PreviewRun: Equatable, Sendable {
    public var column: Int
    public var text: String
    public var style: CellStyle
}

/// Turns rows of text with SGR colour escapes (what libchafa writes for symbols) into runs
/// of styled text, so the screen model holds colours as cell styles: the diff compares
/// them like any other style, and no escape ever sits inside a cell. Any escape other than
/// SGR is dropped, and so is any control character.
public enum SGRText {
    public static func runs(_ row: String) -> [PreviewRun] {
        var runs: [PreviewRun] = []
        var style = CellStyle.plain
        var column = 0
        var scalars = Array(row.unicodeScalars)[...]
        var text = String.UnicodeScalarView()
        func flush() {
            guard !text.isEmpty else { return }
            let piece = String(text)
            let width = TextWidth.columns(of: piece)
            if let last = runs.last, last.style == style, last.column + TextWidth.columns(of: last.text) == column {
                runs[runs.count - 1].text += piece
            } else {
                runs.append(PreviewRun(column: column, text: piece, style: style))
            }
            column += width
            text = String.UnicodeScalarView()
        }
        while let scalar = scalars.popFirst() {
            if scalar == "\u{1B}" {
                flush()
                guard scalars.first == "[" else { skipEscape(&scalars); continue }
                scalars.removeFirst()
                var body = ""
                while let c = scalars.first, (0x30...0x3F).contains(c.value) || (0x20...0x2F).contains(c.value) {
                    body.unicodeScalars.append(c); scalars.removeFirst()
                }
                let final = scalars.popFirst()
                if final == "m" { apply(body, to: &style) }
                continue
            }
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { continue }
            text.append(scalar)
        }
        flush()
        return runs
    }

    /// Skips an escape that is not a CSI: a string one (OSC, DCS, APC…) up to its
    /// terminator, or a two-character one.
    private static func skipEscape(_ scalars: inout ArraySlice<Unicode.Scalar>) {
        guard let kind = scalars.popFirst() else { return }
        guard ["]", "P", "_", "^", "X"].contains(kind) else { return }
        while let c = scalars.popFirst() {
            if c == "\u{07}" { return }
            if c == "\u{1B}", scalars.first == "\\" { scalars.removeFirst(); return }
        }
    }

    /// One SGR sequence's parameters applied to the style.
    static func apply(_ body: String, to style: inout CellStyle) {
        let params = body.isEmpty ? [0] : body.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) ?? 0 }
        var i = 0
        func color(_ at: inout Int) -> TerminalColor? {
            guard at + 1 < params.count else { return nil }
            if params[at + 1] == 5, at + 2 < params.count {
                defer { at += 2 }
                return .indexed(UInt8(clamping: params[at + 2]))
            }
            if params[at + 1] == 2, at + 4 < params.count {
                defer { at += 4 }
                return .rgb(UInt8(clamping: params[at + 2]), UInt8(clamping: params[at + 3]), UInt8(clamping: params[at + 4]))
            }
            return nil
        }
        while i < params.count {
            let p = params[i]
            switch p {
            case 0: style = .plain
            case 1: style.bold = true
            case 2: style.dim = true
            case 4: style.underline = true
            case 7: style.reverse = true
            case 22: style.bold = false; style.dim = false
            case 24: style.underline = false
            case 27: style.reverse = false
            case 30...37: style.foreground = .indexed(UInt8(p - 30))
            case 90...97: style.foreground = .indexed(UInt8(p - 90 + 8))
            case 40...47: style.background = .indexed(UInt8(p - 40))
            case 100...107: style.background = .indexed(UInt8(p - 100 + 8))
            case 38: style.foreground = color(&i)
            case 48: style.background = color(&i)
            case 39: style.foreground = nil
            case 49: style.background = nil
            default: break
            }
            i += 1
        }
    }

    /// The SGR parameters that draw a style's own colours (for the backend).
    public static func parameters(_ color: TerminalColor, background: Bool) -> String {
        switch color {
        case .indexed(let n) where n < 8: return String((background ? 40 : 30) + Int(n))
        case .indexed(let n) where n < 16: return String((background ? 100 : 90) + Int(n) - 8)
        case .indexed(let n): return "\(background ? 48 : 38);5;\(n)"
        case .rgb(let r, let g, let b): return "\(background ? 48 : 38);2;\(r);\(g);\(b)"
        }
    }
}
