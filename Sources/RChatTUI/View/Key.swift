/// A key press as the view understands it: the curses backend decodes into this, and tests
/// feed it directly, without a terminal.
public enum Key: Equatable, Sendable {
    case character(Character)
    /// Ctrl plus a letter, lower case: `.control("a")` is Ctrl-A.
    case control(Character)
    case enter, tab, backTab, backspace, delete, escape
    case up, down, left, right, home, end, pageUp, pageDown
    case function(Int)
    /// The terminal changed size: re-lay out from the model.
    case resize
}
