/// The account's settings that change what the view shows, read at start and again when a
/// command changes them while the view runs.
public struct ViewSettings: Equatable, Sendable {
    public var alerts: AlertPolicy.Content
    /// `bell on`: a terminal bell on a new message in a conversation that is not open.
    public var bell: Bool
    /// `mouse on` (the default): the wheel scrolls the pane under the pointer, a click
    /// selects; off leaves the mouse to the terminal.
    public var mouse: Bool
    /// Whether desktop alerts can be shown here and may be: without a desktop the view never
    /// offers them.
    public var desktop: AlertPolicy.Desktop
    /// `alerts-while-open`.
    public var whileOpen: AlertPolicy.WhileOpen
    /// `glyphs ascii`: the view's own glyphs in ASCII even where the terminal takes Unicode.
    public var glyphs: GlyphChoice

    public init(alerts: AlertPolicy.Content = .name, bell: Bool = false, mouse: Bool = true, desktop: AlertPolicy.Desktop = .notAllowed,
                whileOpen: AlertPolicy.WhileOpen = .default, glyphs: GlyphChoice = .unicode) {
        self.alerts = alerts
        self.bell = bell
        self.mouse = mouse
        self.desktop = desktop
        self.whileOpen = whileOpen
        self.glyphs = glyphs
    }
}

/// `rchat settings glyphs unicode|ascii`: which characters the view draws its statuses,
/// borders and marks with (what other people wrote is drawn as written either way).
public enum GlyphChoice: String, CaseIterable, Sendable {
    /// Where the locale is UTF-8 (the default).
    case unicode
    /// Always, for a font that lacks even the common glyphs.
    case ascii
}
