import RChatCore

/// A whole frame as a grid of cells: what the view draws and what tests read. The curses
/// backend diffs two of these and writes only what changed.
public struct Screen: Equatable, Sendable {
    public let rows: Int
    public let columns: Int
    /// ASCII mode (non-UTF-8 locale): anything else is drawn as `?` so nothing garbles.
    public let asciiOnly: Bool
    public private(set) var cells: [Cell]
    /// Where the terminal cursor goes (the composer's insertion point), or hidden.
    public var cursor: (row: Int, column: Int)?
    /// The terminal title, emitted by the backend as an escape sequence, never in the grid.
    public var title = ""
    /// Graphics the terminal draws over blank cells (photo previews in sixel or kitty), each
    /// wholly inside the grid; the backend writes each once where it is, and clears it when
    /// it moves or goes.
    public var images: [ScreenImage] = []

    public init(rows: Int, columns: Int, asciiOnly: Bool = false) {
        self.rows = max(0, rows)
        self.columns = max(0, columns)
        self.asciiOnly = asciiOnly
        cells = Array(repeating: .blank, count: self.rows * self.columns)
    }

    public static func == (a: Screen, b: Screen) -> Bool {
        a.rows == b.rows && a.columns == b.columns && a.cells == b.cells && a.title == b.title && a.images == b.images
            && a.cursor?.row == b.cursor?.row && a.cursor?.column == b.cursor?.column
    }

    public subscript(row: Int, column: Int) -> Cell {
        cells[row * columns + column]
    }

    /// Writes `text` from (row, column), clipped at `limit` (an exclusive column; the right
    /// edge by default). Returns the column after the last one written. Each grapheme is one
    /// cell (and continuation cells for its other columns); one that would straddle the
    /// limit is not drawn in part: its columns up to the limit become spaces, so columns
    /// stay aligned and nothing passes the edge.
    @discardableResult
    public mutating func put(_ text: String, row: Int, column: Int, style: CellStyle = .plain, limit: Int? = nil) -> Int {
        guard row >= 0, row < rows else { return column }
        let end = min(limit ?? columns, columns)
        var col = max(0, column)
        for ch in text {
            let (shown, width) = TextWidth.displayed(ch, asciiOnly: asciiOnly)
            if width == 0 { continue }
            if col + width > end {
                while col < end { set(row, col, Cell(" ", style: style)); col += 1 }
                return col
            }
            set(row, col, Cell(shown, width: UInt8(width), style: style))
            col += width
        }
        return col
    }

    /// Fills columns [from, to) of a row with spaces in a style.
    public mutating func fill(row: Int, from: Int = 0, to: Int? = nil, style: CellStyle = .plain) {
        guard row >= 0, row < rows else { return }
        for col in max(0, from)..<max(max(0, from), min(to ?? columns, columns)) { set(row, col, Cell(" ", style: style)) }
    }

    /// Changes the style of columns [from, to) of a row, keeping the characters.
    public mutating func restyle(row: Int, from: Int, to: Int, _ change: (inout CellStyle) -> Void) {
        guard row >= 0, row < rows else { return }
        for col in max(0, from)..<max(max(0, from), min(to, columns)) { change(&cells[row * columns + col].style) }
    }

    /// Sets one character's cell and its continuations, first blanking every character it
    /// overlaps in part, so no half of a wide character is ever left behind.
    private mutating func set(_ row: Int, _ col: Int, _ cell: Cell) {
        let base = row * columns
        let end = min(col + max(1, Int(cell.width)), columns)
        var start = col
        while start > 0, cells[base + start].isContinuation { start -= 1 }
        var c = start
        while c < end {
            let w = max(1, Int(cells[base + c].width))
            for k in c..<min(c + w, columns) { cells[base + k] = Cell(" ", style: cells[base + k].style) }
            c += w
        }
        cells[base + col] = cell
        for k in (col + 1)..<max(col + 1, end) { cells[base + k] = .continuation(cell.style) }
    }

    /// A row as a string: each character once (continuations skipped), trailing spaces dropped.
    public func line(_ row: Int) -> String {
        var s = ""
        for col in 0..<columns where !self[row, col].isContinuation { s.append(self[row, col].character) }
        while s.last == " " { s.removeLast() }
        return s
    }

    /// Every row, as `line` gives it.
    public var text: [String] { (0..<rows).map(line) }

    /// The first place `needle` appears, as (row, column): for tests and for finding things.
    public func position(of needle: String) -> (row: Int, column: Int)? {
        let wanted = Array(needle)
        guard !wanted.isEmpty else { return nil }
        for row in 0..<rows {
            let starts = (0..<columns).filter { !self[row, $0].isContinuation }
            let chars = starts.map { self[row, $0].character }
            guard chars.count >= wanted.count else { continue }
            for i in 0...(chars.count - wanted.count) where Array(chars[i..<(i + wanted.count)]) == wanted {
                return (row, starts[i])
            }
        }
        return nil
    }
}

/// A sixel or kitty image placed on the screen, its top-left cell at (row, column).
public struct ScreenImage: Equatable, Sendable {
    public enum Kind: Equatable, Sendable { case sixel, kitty }

    public var row: Int
    public var column: Int
    public var rows: Int
    public var columns: Int
    public var kind: Kind
    /// Which picture it is (message and size): the escape is the same for the same key.
    public var key: String
    /// What draws it, written with the cursor at its top-left cell.
    public var escape: String

    public static func == (a: ScreenImage, b: ScreenImage) -> Bool {
        a.row == b.row && a.column == b.column && a.rows == b.rows && a.columns == b.columns && a.kind == b.kind && a.key == b.key
    }
}
