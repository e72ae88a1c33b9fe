/// How many pixels one character cell of the terminal has: what a sixel or kitty picture
/// must be sized by to cover exactly the cells kept for it.
public struct CellPixels: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init?(width: Int, height: Int) {
        // A cell of a few pixels or of hundreds is a terminal that reported nonsense (and a
        // cell at least one sixel band tall keeps a picture of one band inside one row).
        guard (2...512).contains(width), (PixelFit.sixelBand...512).contains(height) else { return nil }
        self.width = width; self.height = height
    }

    /// From the whole text area in pixels and in cells (`TIOCGWINSZ`, or `CSI 14 t`).
    public init?(area width: Int, _ height: Int, columns: Int, rows: Int) {
        guard columns > 0, rows > 0 else { return nil }
        self.init(width: width / columns, height: height / rows)
    }

    public var description: String { "\(width)x\(height)" }
}

/// What a terminal answered to the view's questions about its pixels (`CSI 16 t`: the
/// cell, `CSI 14 t`: the text area, then `CSI c`, which every terminal answers, so the
/// view knows the others are not coming), and what else arrived meanwhile: the user's
/// keys, which go back to the key decoder untouched.
public struct TerminalReplies: Equatable, Sendable {
    /// `CSI 6 ; height ; width t`.
    public var cell: (width: Int, height: Int)?
    /// `CSI 4 ; height ; width t`.
    public var textArea: (width: Int, height: Int)?
    /// The primary device attributes came (`CSI ? … c`): every answer is in.
    public var complete = false
    /// Every byte that was no reply, in order.
    public var rest: [UInt8] = []

    /// The questions, in the order the answers are awaited.
    public static let query = "\u{1B}[16t\u{1B}[14t\u{1B}[c"

    public init() {}

    /// Reads the bytes the terminal sent: the three replies wherever they are among the
    /// keys; a reply cut short at the end stays in `rest` with the keys.
    public init(parsing bytes: [UInt8]) {
        var i = 0
        while i < bytes.count {
            if let (reply, end) = Self.reply(in: bytes, at: i) {
                switch reply {
                case .window(6, let h, let w): cell = (w, h)
                case .window(4, let h, let w): textArea = (w, h)
                case .window: rest += bytes[i..<end]
                case .attributes: complete = true
                }
                i = end
            } else {
                rest.append(bytes[i])
                i += 1
            }
        }
    }

    /// The cell's size: the cell reply, else the text area over the cells.
    public func cellPixels(columns: Int, rows: Int) -> CellPixels? {
        if let cell, let size = CellPixels(width: cell.width, height: cell.height) { return size }
        if let area = textArea { return CellPixels(area: area.width, area.height, columns: columns, rows: rows) }
        return nil
    }

    private enum Reply { case window(Int, Int, Int), attributes }

    /// A whole `CSI 4|6 ; h ; w t` or `CSI ? digits;… c` starting at `start`, and where it ends.
    private static func reply(in bytes: [UInt8], at start: Int) -> (Reply, Int)? {
        guard start + 2 < bytes.count, bytes[start] == 0x1B, bytes[start + 1] == UInt8(ascii: "[") else { return nil }
        var i = start + 2
        let private_ = bytes[i] == UInt8(ascii: "?")
        if private_ { i += 1 }
        let from = i
        while i < bytes.count, bytes[i] == UInt8(ascii: ";") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) { i += 1 }
        guard i < bytes.count else { return nil }
        let body = String(decoding: bytes[from..<i], as: UTF8.self)
        if private_ { return bytes[i] == UInt8(ascii: "c") && !body.isEmpty ? (.attributes, i + 1) : nil }
        guard bytes[i] == UInt8(ascii: "t") else { return nil }
        let numbers = body.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) }
        guard numbers.count == 3, let kind = numbers[0], kind == 4 || kind == 6, let h = numbers[1], let w = numbers[2] else { return nil }
        return (.window(kind, h, w), i + 1)
    }

    public static func == (a: TerminalReplies, b: TerminalReplies) -> Bool {
        a.cell?.width == b.cell?.width && a.cell?.height == b.cell?.height && a.textArea?.width == b.textArea?.width
            && a.textArea?.height == b.textArea?.height && a.complete == b.complete && a.rest == b.rest
    }
}

/// Where a picture goes in the cells kept for it, in pixels: as large as the box allows
/// with its own proportions, never wider or taller than the box, and never more rows than
/// the box has (a sixel picture is drawn in bands of six pixels, so its height is a whole
/// number of bands that fits).
public struct PixelFit: Equatable, Sendable {
    /// The picture's own size on the screen, in pixels.
    public var width: Int
    public var height: Int
    /// The cells it covers (what the view keeps blank for it).
    public var columns: Int
    public var rows: Int

    public static let sixelBand = 6

    public init(width: Int, height: Int, columns: Int, rows: Int) {
        self.width = width; self.height = height; self.columns = columns; self.rows = rows
    }

    /// An image of `imageWidth`×`imageHeight` pixels in a box of `columns`×`rows` cells of `cell`.
    public init(imageWidth: Int, imageHeight: Int, columns: Int, rows: Int, cell: CellPixels) {
        let boxWidth = max(1, columns) * cell.width
        // Whole sixel bands only, so the last band cannot reach below the box.
        let boxHeight = max(Self.sixelBand, max(1, rows) * cell.height / Self.sixelBand * Self.sixelBand)
        let iw = max(1, imageWidth), ih = max(1, imageHeight)
        // The larger the picture can be: limited by the width or by the height.
        var w: Int, h: Int
        if iw * boxHeight >= ih * boxWidth {
            w = boxWidth
            h = max(1, ih * boxWidth / iw)
        } else {
            h = boxHeight
            w = max(1, iw * boxHeight / ih)
        }
        h = min(boxHeight, max(Self.sixelBand, h / Self.sixelBand * Self.sixelBand))
        w = min(boxWidth, w)
        self.init(width: w, height: h, columns: min(max(1, columns), (w + cell.width - 1) / cell.width),
                  rows: min(max(1, rows), (h + cell.height - 1) / cell.height))
    }
}
