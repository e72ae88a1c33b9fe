@preconcurrency import CNcursesw

/// Turns what curses reads into Keys: a character code, or a KEY_* function key code.
public enum KeyDecoder {
    /// A character: control codes become keys, printable ones `.character`. Enter is CR
    /// (13); LF (10) is Ctrl-J, which the view takes as Enter too, but kept apart here so a
    /// paste's CRLF is one line break.
    public static func character(_ code: UInt32) -> Key? {
        switch code {
        case 13: return .enter
        case 9: return .tab
        case 8, 127: return .backspace
        case 27: return .escape
        case 1...26: return .control(Character(Unicode.Scalar(UInt8(code) + 96)))
        case 0..<32, 128..<160: return nil
        default:
            guard let scalar = Unicode.Scalar(code) else { return nil }
            return .character(Character(scalar))
        }
    }

    /// A function key code (KEY_UP, KEY_RESIZE, …).
    public static func functionKey(_ code: Int32) -> Key? {
        switch code {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        // KEY_FIND: xterm's terminfo names ESC[1~ Find; tmux and screen send it for Home.
        case KEY_HOME, KEY_FIND: return .home
        case KEY_END, KEY_LL, KEY_SELECT: return .end
        case KEY_PPAGE: return .pageUp
        case KEY_NPAGE: return .pageDown
        case KEY_DC: return .delete
        case KEY_BACKSPACE: return .backspace
        case KEY_ENTER: return .enter
        case KEY_BTAB: return .backTab
        case KEY_RESIZE: return .resize
        case (KEY_F0 + 1)...(KEY_F0 + 24): return .function(Int(code - KEY_F0))
        default: return nil
        }
    }

    /// Home and End as tmux, screen, the Linux console, rxvt and xterm send them (the bytes
    /// after ESC), whatever the terminfo entry of $TERM lists.
    public static let escapeSequences: [(bytes: String, key: Key)] = [
        ("[1~", .home), ("[7~", .home), ("[H", .home), ("OH", .home),
        ("[4~", .end), ("[8~", .end), ("[F", .end), ("OF", .end),
    ]

    /// Focus reporting: `ESC [ ? 1004 h` turns it on, and the terminal then sends
    /// `focusSequences` (after Esc) when its window gains or loses focus.
    public static let focusReportingOn = "\u{1B}[?1004h"
    public static let focusReportingOff = "\u{1B}[?1004l"
    public static let focusSequences: [(bytes: String, key: Key)] = [("[I", .focusIn), ("[O", .focusOut)]

    /// Ctrl-Left and Ctrl-Right (a word left / right) as xterm and rxvt send them. Where the
    /// terminfo entry lists them, curses delivers them as extended key codes instead: the
    /// backend asks curses which code each sequence has (`key_defined`).
    public static let wordSequences: [(bytes: String, key: Key)] = [
        ("[1;5D", .controlLeft), ("[1;5C", .controlRight), ("Od", .controlLeft), ("Oc", .controlRight),
    ]

    /// Shift-Enter where the terminal tells it from Enter (xterm's modifyOtherKeys, kitty's
    /// keyboard protocol): it does what Alt-Enter does, a new line in the message.
    public static let shiftEnterSequences: [(bytes: String, key: Key)] = [
        ("[27;2;13~", .alt(.enter)), ("[13;2u", .alt(.enter)),
    ]

    static let allSequences = escapeSequences + focusSequences + wordSequences + shiftEnterSequences

    /// Mouse reporting: button presses and the wheel (1000), in the SGR encoding (1006),
    /// which has no limit on coordinates and tells a release from a press. Terminals keep
    /// their own selection on Shift with the mouse.
    public static let mouseReportingOn = "\u{1B}[?1000h\u{1B}[?1006h"
    public static let mouseReportingOff = "\u{1B}[?1006l\u{1B}[?1000l"

    /// The SGR mouse report `keys` starts with (after Esc): `[<B;X;YM` or `…m`, and how many
    /// keys it spans; nil when it is not one (then the keys pass as they came).
    static func mouseReport(in keys: ArraySlice<Key>) -> (Key, Int)? {
        var i = keys.startIndex
        guard keys.count >= 7, keys[i] == .character("["), keys[i + 1] == .character("<") else { return nil }
        i += 2
        var numbers: [Int] = []
        var digits = 0, value = 0
        while i < keys.endIndex, numbers.count < 3 {
            guard case .character(let c) = keys[i] else { return nil }
            if let d = c.wholeNumberValue, c.isASCII {
                guard digits < 6 else { return nil }
                value = value * 10 + d
                digits += 1
            } else if (c == ";" && numbers.count < 2) || ((c == "M" || c == "m") && numbers.count == 2) {
                guard digits > 0 else { return nil }
                numbers.append(value)
                value = 0
                digits = 0
                if numbers.count == 3 {
                    let (code, column, row) = (numbers[0], numbers[1], numbers[2])
                    guard column >= 1, row >= 1 else { return nil }
                    let action: MouseEvent.Action
                    if c == "m" { action = .release }
                    else if code & 32 != 0 { action = .other }   // motion
                    else if code & 64 != 0 { action = code & 3 == 0 ? .wheelUp : code & 3 == 1 ? .wheelDown : .other }
                    else if code & 3 == 3 { action = .release }
                    else { action = .press(button: code & 3) }
                    return (.mouse(MouseEvent(action, row: row - 1, column: column - 1)), i - keys.startIndex + 1)
                }
            } else {
                return nil
            }
            i += 1
        }
        return nil
    }

    /// Puts back together what curses hands over as Esc followed by more keys in the same
    /// read: a sequence of `allSequences` it did not recognise (which
    /// would otherwise type "[4~" into the composer), and Alt with a key (`.alt`). Esc before
    /// `[` or `O` starts a sequence, never Alt, so an unknown sequence and a bracketed paste's
    /// markers pass through as they came. A lone Esc and everything else pass unchanged.
    public static func folding(_ keys: [Key]) -> [Key] {
        guard keys.contains(.escape) else { return keys }
        var out: [Key] = []
        out.reserveCapacity(keys.count)
        var i = keys.startIndex
        while i < keys.endIndex {
            let rest = keys[(i + 1)...]
            if keys[i] == .escape, let (key, length) = sequence(in: rest) ?? mouseReport(in: rest) {
                out.append(key)
                i += 1 + length
            } else if keys[i] == .escape, let next = rest.first, let alt = altKey(next) {
                out.append(alt)
                i += 2
            } else {
                out.append(keys[i])
                i += 1
            }
        }
        return out
    }

    /// Alt with `key`, when Esc followed by `key` means that.
    private static func altKey(_ key: Key) -> Key? {
        switch key {
        case .character("["), .character("O"): return nil
        case .character, .control, .enter, .backspace, .delete, .left, .right, .up, .down: return .alt(key)
        default: return nil
        }
    }

    /// The known sequence `keys` starts with, and how many keys it spans.
    private static func sequence(in keys: ArraySlice<Key>) -> (Key, Int)? {
        for (bytes, key) in allSequences where keys.count >= bytes.count {
            if zip(bytes, keys).allSatisfy({ .character($0) == $1 }) { return (key, bytes.count) }
        }
        return nil
    }
}

/// Bracketed paste (`ESC [ ? 2004 h`): the terminal wraps pasted text in `ESC [200~` and
/// `ESC [201~`. Inside a paste a line break (CR, LF or CRLF) is `"\n"`, typed into the
/// message, so a paste never submits the composer halfway and lands as one message of
/// several lines (a code copied across screen rows arrives whole: `/add` removes the
/// whitespace); a tab is a space; other control keys in a paste are dropped (focus reports
/// pass: they are not pasted). The markers
/// are removed. A paste may span several reads, so whether one is open (and whether its
/// last key was a CR) is kept between calls.
public struct BracketedPaste: Sendable {
    public static let enable = "\u{1B}[?2004h"
    public static let disable = "\u{1B}[?2004l"
    static let start = Array("[200~")
    static let end = Array("[201~")

    public private(set) var inside = false
    /// The last key of the paste was CR: an LF right after it is the same line break.
    private var afterCR = false

    public init() {}

    public mutating func fold(_ keys: [Key]) -> [Key] {
        guard inside || keys.contains(.escape) else { return keys }
        var out: [Key] = []
        out.reserveCapacity(keys.count)
        var i = keys.startIndex
        while i < keys.endIndex {
            if keys[i] == .escape, let marker = Self.marker(in: keys[(i + 1)...]) {
                inside = marker
                i += 1 + Self.start.count
                continue
            }
            let key = keys[i]
            i += 1
            guard inside else { out.append(key); continue }
            defer { afterCR = key == .enter }
            switch key {
            case .character: out.append(key)
            case .enter: out.append(.character("\n"))
            case .control("j") where !afterCR: out.append(.character("\n"))
            case .tab: out.append(.character(" "))
            // Not part of the paste: the window's focus changed meanwhile.
            case .focusIn, .focusOut: out.append(key)
            default: continue
            }
        }
        return out
    }

    /// True after a start marker, false after an end marker, nil for anything else.
    private static func marker(in keys: ArraySlice<Key>) -> Bool? {
        func matches(_ bytes: [Character]) -> Bool {
            keys.count >= bytes.count && zip(bytes, keys).allSatisfy { .character($0) == $1 }
        }
        if matches(start) { return true }
        if matches(end) { return false }
        return nil
    }
}
