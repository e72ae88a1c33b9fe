/// A key press as the view understands it: the curses backend decodes into this, and tests
/// feed it directly, without a terminal.
public indirect enum Key: Equatable, Sendable {
    case character(Character)
    /// Ctrl plus a letter, lower case: `.control("a")` is Ctrl-A.
    case control(Character)
    /// Alt (Meta) with a key: the terminal sends Esc before it. `.alt(.character("r"))` is
    /// Alt-R, `.alt(.enter)` Alt-Enter.
    case alt(Key)
    case enter, tab, backTab, backspace, delete, escape
    case up, down, left, right, home, end, pageUp, pageDown
    /// Ctrl-Left / Ctrl-Right (a word left / right in the composer).
    case controlLeft, controlRight
    case function(Int)
    /// The terminal changed size: re-lay out from the model.
    case resize
    /// Focus reporting (`ESC [ ? 1004 h`): the terminal window gained or lost focus.
    case focusIn, focusOut
    /// A mouse report (SGR mouse mode, `ESC [ ? 1006 h`): a button or the wheel.
    case mouse(MouseEvent)
}

/// What a terminal reports of the mouse in SGR mode (`ESC [ < B ; X ; Y M`, `m` for a
/// release), at a cell counted from 0.
public struct MouseEvent: Equatable, Sendable {
    public enum Action: Equatable, Sendable {
        /// A button went down: 0 left, 1 middle, 2 right.
        case press(button: Int)
        case release
        case wheelUp, wheelDown
        /// Anything else (motion with a button held, the horizontal wheel): ignored.
        case other
    }

    public var action: Action
    public var row: Int
    public var column: Int

    public init(_ action: Action, row: Int, column: Int) {
        self.action = action; self.row = row; self.column = column
    }
}
