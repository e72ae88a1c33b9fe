/// Where each part of the screen goes, from the terminal size (weechat's bars): a header
/// bar on top, the list and the conversation in the middle, the status bar, then the
/// composer on the last row.
public struct Layout: Equatable, Sendable {
    public let rows: Int
    public let columns: Int
    public let headerRow = 0
    public let bodyTop = 1
    public let bodyHeight: Int
    public let statusRow: Int
    public let composerRow: Int
    /// 0 when the list is hidden (narrow terminal, a conversation open and not browsing).
    public let listWidth: Int
    public let paneLeft: Int
    public let paneWidth: Int

    public init(rows: Int, columns: Int, showList: Bool) {
        self.rows = rows
        self.columns = columns
        bodyHeight = max(0, rows - 3)
        statusRow = rows - 2
        composerRow = rows - 1
        listWidth = showList ? min(28, max(14, columns / 4)) : 0
        paneLeft = showList ? listWidth + 1 : 0
        paneWidth = columns - paneLeft
    }

    init(_ state: ViewState) {
        let showList = state.columns >= 60 || state.focus == .list || state.window == nil
        self.init(rows: state.rows, columns: state.columns, showList: showList)
    }
}
