/// The account's settings that change what the view shows, read at start and again when a
/// command changes them while the view runs.
public struct ViewSettings: Equatable, Sendable {
    public var alerts: AlertPolicy.Content
    /// `bell on`: a terminal bell on a new message in a conversation that is not open.
    public var bell: Bool
    /// `glyphs ascii`: the view's own glyphs in ASCII even where the terminal takes Unicode.
    public var glyphs: GlyphChoice

    public init(alerts: AlertPolicy.Content = .name, bell: Bool = false, glyphs: GlyphChoice = .unicode) {
        self.alerts = alerts
        self.bell = bell
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
