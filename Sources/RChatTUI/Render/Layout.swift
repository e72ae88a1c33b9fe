/// Where each part of the screen goes, from the terminal size (weechat's bars): a header
/// bar on top, the list and the conversation in the middle, the status bar, then the
/// composer on the last rows (one, or more for a draft of several lines).
public struct Layout: Equatable, Sendable {
    public let rows: Int
    public let columns: Int
    public let headerRow = 0
    public let bodyTop = 1
    public let bodyHeight: Int
    public let statusRow: Int
    /// The composer's first row; it takes the rows from there to the bottom.
    public let composerRow: Int
    public let composerHeight: Int
    /// 0 when the list is hidden (narrow terminal, a conversation open and not browsing).
    public let listWidth: Int
    public let paneLeft: Int
    public let paneWidth: Int

    public init(rows: Int, columns: Int, showList: Bool, composerHeight: Int = 1) {
        self.rows = rows
        self.columns = columns
        self.composerHeight = max(1, composerHeight)
        bodyHeight = max(0, rows - 2 - self.composerHeight)
        statusRow = rows - 1 - self.composerHeight
        composerRow = rows - self.composerHeight
        listWidth = showList ? min(28, max(14, columns / 4)) : 0
        paneLeft = showList ? listWidth + 1 : 0
        paneWidth = columns - paneLeft
    }

    init(_ state: ViewState) {
        let showList = state.columns >= 60 || state.focus == .list || state.window == nil
        self.init(rows: state.rows, columns: state.columns, showList: showList, composerHeight: ComposerLine.height(state))
    }
}
