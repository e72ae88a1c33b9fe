import RChatCore
import RChatMedia

/// Which kind of preview this terminal gets: kitty graphics in kitty (`TERM=xterm-kitty`
/// or `KITTY_WINDOW_ID`), sixel when asked (`RCHAT_GRAPHICS=sixel`), and `RCHAT_GRAPHICS=
/// symbols|kitty|sixel` over what was detected; graphics only in a view of at least 80×24,
/// else symbols, and sixel only where the terminal said how many pixels a cell has (a
/// picture of a guessed size could cover the rows below it). Symbols are coloured as the
/// terminal says it can (`COLORTERM`, terminfo's `Tc`/`RGB`, `TERM`), never with
/// `NO_COLOR`, and there are none in ASCII mode (they are Unicode blocks).
enum PreviewStyle {
    static let graphicsRows = 24
    static let graphicsColumns = 80

    static func mode(environment: [String: String], rows: Int, columns: Int, unicode: Bool,
                     cell: CellPixels? = CellPixels(width: 10, height: 20), terminfoTrueColor: Bool = false) -> PreviewMode? {
        let graphics: PreviewMode?
        switch environment["RCHAT_GRAPHICS"]?.lowercased() {
        case "symbols": graphics = nil
        case "kitty": graphics = .kitty
        case "sixel": graphics = .sixel
        default:
            let kitty = environment["TERM"] == "xterm-kitty" || !(environment["KITTY_WINDOW_ID"] ?? "").isEmpty
            graphics = kitty ? .kitty : nil
        }
        if let graphics, rows >= graphicsRows, columns >= graphicsColumns, graphics != .sixel || cell != nil { return graphics }
        guard unicode else { return nil }
        return .symbols(colors: colorDepth(environment, terminfoTrueColor: terminfoTrueColor))
    }

    /// Whether this terminal may get sixel or kitty pictures, so the backend asks it how
    /// large its cells are in pixels (where the kernel does not know).
    static func drawsPixels(_ environment: [String: String]) -> Bool {
        switch environment["RCHAT_GRAPHICS"]?.lowercased() {
        case "symbols": return false
        case "kitty", "sixel": return true
        default: return environment["TERM"] == "xterm-kitty" || !(environment["KITTY_WINDOW_ID"] ?? "").isEmpty
        }
    }

    /// `terminfoTrueColor`: $TERM's terminfo entry has `Tc` or `RGB` (tmux's and ncurses'
    /// flags for 24-bit colour).
    static func colorDepth(_ environment: [String: String], terminfoTrueColor: Bool = false) -> ColorDepth {
        if !(environment["NO_COLOR"] ?? "").isEmpty { return .none }
        let colorTerm = environment["COLORTERM"]?.lowercased()
        if colorTerm == "truecolor" || colorTerm == "24bit" || terminfoTrueColor || environment["TERM"] == "xterm-kitty" { return .trueColor }
        if environment["TERM"]?.contains("256color") == true { return .ansi256 }
        return .ansi16
    }
}

/// What the backend learnt of the terminal that the view's previews depend on.
public struct TerminalTraits: Equatable, Sendable {
    /// One cell in pixels (`TIOCGWINSZ`, else the terminal's answer to `CSI 16 t`/`14 t`);
    /// nil while unknown. Tests and the default: 10×20, what previews were drawn for before.
    public var cell: CellPixels? = CellPixels(width: 10, height: 20)
    /// terminfo says 24-bit colour (`Tc` or `RGB`).
    public var trueColor = false

    public init(cell: CellPixels? = CellPixels(width: 10, height: 20), trueColor: Bool = false) {
        self.cell = cell; self.trueColor = trueColor
    }
}

extension PreviewMode {
    var isGraphics: Bool { self == .sixel || self == .kitty }
}
