/// What the backend writes for pictures (sixel, kitty) between two frames: each once where
/// it is, again only when it moved, when ncurses repainted its rows, or after a full redraw;
/// and where one went, its rows repainted by ncurses (a sixel picture is pixels in the
/// cells). Kitty keeps pictures apart from text, so when any moved or went they are all
/// deleted and the ones left written again. Pure, so the rules are tested without a terminal.
enum ImageWrites {
    /// Deletes every kitty picture on the screen, with its data.
    static let kittyDeleteAll = "\u{1B}_Ga=d,d=A\u{1B}\\"

    /// The pictures that may be drawn: none whose bottom reaches the last row, where a
    /// terminal that moves the cursor below a sixel picture (xterm) would scroll the whole
    /// screen up.
    static func drawable(_ images: [ScreenImage], screenRows: Int) -> [ScreenImage] {
        images.filter { $0.row >= 0 && $0.rows > 0 && $0.row + $0.rows <= screenRows - 1 }
    }

    /// Rows ncurses must repaint because a picture there moved or went.
    static func rowsToRepaint(from old: [ScreenImage], to new: [ScreenImage], screenRows: Int) -> Set<Int> {
        var rows: Set<Int> = []
        for image in old where !new.contains(image) {
            for row in image.row..<min(image.row + image.rows, screenRows) { rows.insert(row) }
        }
        return rows
    }

    /// The bytes to write after ncurses' frame (cursor and attributes saved and restored),
    /// or "" when no picture needs writing.
    static func sequence(from old: [ScreenImage], to new: [ScreenImage], repainted: Set<Int>, full: Bool) -> String {
        let changed = full || old != new
        let deleteKitty = changed && (old + new).contains { $0.kind == .kitty }
        var out = deleteKitty ? kittyDeleteAll : ""
        for image in new {
            let drawn = !full && old.contains(image)
            let touched = (image.row..<(image.row + image.rows)).contains { repainted.contains($0) }
            let again = image.kind == .kitty ? (deleteKitty || !drawn) : (!drawn || touched)
            if again { out += "\u{1B}[\(image.row + 1);\(image.column + 1)H" + image.escape }
        }
        return out.isEmpty ? "" : "\u{1B}7" + out + "\u{1B}8"
    }
}
