import RChatMedia

/// Which kind of preview this terminal gets: kitty graphics in kitty (`TERM=xterm-kitty`
/// or `KITTY_WINDOW_ID`), sixel when asked (`RCHAT_GRAPHICS=sixel`), and `RCHAT_GRAPHICS=
/// symbols|kitty|sixel` over what was detected; graphics only in a view of at least 80×24,
/// else symbols. Symbols are coloured as the terminal says it can (`COLORTERM`, `TERM`),
/// never with `NO_COLOR`, and there are none in ASCII mode (they are Unicode blocks).
enum PreviewStyle {
    static let graphicsRows = 24
    static let graphicsColumns = 80

    static func mode(environment: [String: String], rows: Int, columns: Int, unicode: Bool) -> PreviewMode? {
        let graphics: PreviewMode?
        switch environment["RCHAT_GRAPHICS"]?.lowercased() {
        case "symbols": graphics = nil
        case "kitty": graphics = .kitty
        case "sixel": graphics = .sixel
        default:
            let kitty = environment["TERM"] == "xterm-kitty" || !(environment["KITTY_WINDOW_ID"] ?? "").isEmpty
            graphics = kitty ? .kitty : nil
        }
        if let graphics, rows >= graphicsRows, columns >= graphicsColumns { return graphics }
        guard unicode else { return nil }
        return .symbols(colors: colorDepth(environment))
    }

    static func colorDepth(_ environment: [String: String]) -> ColorDepth {
        if !(environment["NO_COLOR"] ?? "").isEmpty { return .none }
        let colorTerm = environment["COLORTERM"]?.lowercased()
        if colorTerm == "truecolor" || colorTerm == "24bit" || environment["TERM"] == "xterm-kitty" { return .trueColor }
        if environment["TERM"]?.contains("256color") == true { return .ansi256 }
        return .ansi16
    }
}
