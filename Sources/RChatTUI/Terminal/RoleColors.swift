/// Which colour a role gets, on the terminal's own background (`use_default_colors`): one
/// that reads on a white background (xterm's default) and on a black one. Yellow, cyan and
/// white vanish on white and blue on black, so no role has them; where the terminal has
/// only 8 or 16 colours, xterm draws bold text in colours 0–7 in their bright versions
/// (magenta becomes ff00ff, too light on white), so there only red is left, and names and
/// the other roles keep the terminal's own colour (their attributes carry them). With 256
/// colours the fixed 6×6×6 cube has darker ones that read on both.
public enum RoleColors {
    /// The foreground colour number (as curses and `SGR 38;5` count them) for `role` on a
    /// terminal with `colors` colours; nil: the terminal's own foreground.
    public static func foreground(_ role: ColorRole, colors: Int) -> Int? {
        if colors >= 256 {
            switch role {
            case .normal, .quiet: return nil
            case .accent: return 31     // #0087af
            case .good: return 28       // #008700
            case .warning: return 130   // #af5f00
            case .danger: return 160    // #d70000
            // Group members' names: six more from the cube that read on both, apart from the
            // roles above (purple, teal, orange, rose, slate blue, olive).
            case .member0: return 97    // #875faf
            case .member1: return 30    // #008787
            case .member2: return 166   // #d75f00
            case .member3: return 132   // #af5f87
            case .member4: return 61    // #5f5faf
            case .member5: return 64    // #5f8700
            }
        }
        guard colors >= 8 else { return nil }
        switch role {
        case .danger: return 1          // red (bold: bright red)
        // With 8 or 16 colours no other colour reads on both backgrounds: names stay bold.
        case .normal, .quiet, .accent, .good, .warning, .member0, .member1, .member2, .member3, .member4, .member5: return nil
        }
    }

    /// The SGR parameters that set it, for cells written around curses ("31", "38;5;130").
    public static func sgr(_ color: Int) -> String {
        color < 8 ? String(30 + color) : "38;5;\(color)"
    }
}
