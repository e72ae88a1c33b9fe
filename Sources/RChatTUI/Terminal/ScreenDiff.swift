/// Consecutive changed cells of one row in one style: what the backend writes.
public struct ScreenRun: Equatable, Sendable {
    public var row: Int
    public var column: Int
    public var style: CellStyle
    /// The cells that start a character (continuations are implied by width).
    public var cells: [Cell]

    public var text: String { String(cells.map(\.character)) }
}

/// Compares two frames so that only changed cells are written: no clear per event, no
/// flicker. A changed half of a wide character rewrites the whole character.
public enum ScreenDiff {
    public static func runs(from old: Screen?, to new: Screen) -> [ScreenRun] {
        let whole = old == nil || old!.rows != new.rows || old!.columns != new.columns
        var runs: [ScreenRun] = []
        for row in 0..<new.rows {
            var current: ScreenRun?
            var col = 0
            while col < new.columns {
                let cell = new[row, col]
                if cell.isContinuation { col += 1; continue }
                let width = max(1, Int(cell.width))
                var changed = whole
                if !changed, let old {
                    for c in col..<min(col + width, new.columns) where old[row, c] != new[row, c] { changed = true }
                }
                if changed {
                    if var run = current, run.style == cell.style, run.column + runWidth(run) == col {
                        run.cells.append(cell)
                        current = run
                    } else {
                        if let run = current { runs.append(run) }
                        current = ScreenRun(row: row, column: col, style: cell.style, cells: [cell])
                    }
                } else if let run = current {
                    runs.append(run)
                    current = nil
                }
                col += width
            }
            if let run = current { runs.append(run) }
        }
        return runs
    }

    private static func runWidth(_ run: ScreenRun) -> Int {
        run.cells.reduce(0) { $0 + max(1, Int($1.width)) }
    }
}
