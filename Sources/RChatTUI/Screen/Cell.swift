/// What a cell's colour means, not which colour it is: the curses backend maps roles to
/// colours only when colours are allowed, so nothing may depend on them (NO_COLOR).
public enum ColorRole: UInt8, Sendable, CaseIterable {
    case normal, accent, good, warning, danger, quiet
    /// A group member's name: each author keeps one of these (`member(named:)`).
    case member0, member1, member2, member3, member4, member5

    static let members: [ColorRole] = [.member0, .member1, .member2, .member3, .member4, .member5]

    /// The colour of a member's name in a group: the same for a name in every group and run
    /// (FNV-1a of its UTF-8, mixed as MurmurHash3's finaliser mixes, since FNV's low bits
    /// alone follow its bytes' parity), so people are known by colour as well as by name.
    public static func member(named name: String) -> ColorRole {
        var hash: UInt32 = 2_166_136_261
        for byte in name.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        hash ^= hash >> 16
        hash &*= 0x85EB_CA6B
        hash ^= hash >> 13
        hash &*= 0xC2B2_AE35
        hash ^= hash >> 16
        return members[Int(hash % UInt32(members.count))]
    }
}

/// A colour given as a colour, not a role: only a photo's preview has them (its pixels).
public enum TerminalColor: Hashable, Sendable {
    /// One of the 256 indexed colours (0–15 the ANSI ones).
    case indexed(UInt8)
    case rgb(UInt8, UInt8, UInt8)
}

/// How a cell is drawn. Attributes carry the meaning; colour is an extra.
public struct CellStyle: Hashable, Sendable {
    public var bold = false
    public var reverse = false
    public var dim = false
    public var underline = false
    public var role = ColorRole.normal
    /// A preview's own colours, which no role names; the backend writes such cells itself.
    public var foreground: TerminalColor?
    public var background: TerminalColor?

    /// Carries colours of its own (a preview's cell), not just a role.
    public var hasOwnColors: Bool { foreground != nil || background != nil }

    public init(bold: Bool = false, reverse: Bool = false, dim: Bool = false, underline: Bool = false,
                role: ColorRole = .normal, foreground: TerminalColor? = nil, background: TerminalColor? = nil) {
        self.bold = bold; self.reverse = reverse; self.dim = dim; self.underline = underline; self.role = role
        self.foreground = foreground; self.background = background
    }

    public static let plain = CellStyle()
    public static let bold = CellStyle(bold: true)
    public static let dim = CellStyle(dim: true)
    public static let reverse = CellStyle(reverse: true)
}

/// One terminal column. A grapheme of width N (`TextWidth`) takes its cell and N - 1
/// continuation cells after it, so that every row always has exactly `columns` cells. The
/// cell keeps the grapheme as written; the backend sends `TextWidth.terminalForm` of it.
public struct Cell: Equatable, Sendable {
    public var character: Character
    /// 1 to `TextWidth.widest` for a cell that starts a character; 0 for a continuation.
    public var width: UInt8
    public var style: CellStyle

    public init(_ character: Character, width: UInt8 = 1, style: CellStyle = .plain) {
        self.character = character; self.width = width; self.style = style
    }

    public static let blank = Cell(" ")
    static func continuation(_ style: CellStyle) -> Cell { Cell(" ", width: 0, style: style) }

    public var isContinuation: Bool { width == 0 }
}
