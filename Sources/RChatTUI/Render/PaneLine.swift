/// A piece of text at a column of a pane line.
struct Span: Equatable {
    var column: Int
    var text: String
    var style: CellStyle
}

/// One line of a pane, before it is placed on the screen; `item` says which conversation
/// item it belongs to, so the view knows what was drawn.
struct PaneLine: Equatable {
    var spans: [Span] = []
    var item: Int?
    /// An image whose top-left cell is at this line (column from the pane's left edge); it
    /// covers blank lines below.
    var image: ScreenImage?

    mutating func add(_ column: Int, _ text: String, _ style: CellStyle = .plain) {
        spans.append(Span(column: column, text: text, style: style))
    }
}
