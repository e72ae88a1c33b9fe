@preconcurrency import CChafa
import RChatCore

/// How a preview is drawn: coloured symbols (any terminal), or pixels for terminals that speak
/// sixel or the kitty graphics protocol.
public enum PreviewMode: Sendable, Equatable { case symbols(colors: ColorDepth), sixel, kitty }

/// The colours a terminal shows: none (no escapes at all), the 16 ANSI colours, the 256-colour
/// palette, or 24-bit colour.
public enum ColorDepth: Sendable, Equatable { case none, ansi16, ansi256, trueColor }

/// A drawn preview: symbol rows, each with its own SGR escapes and a reset at its end, all of the
/// same display width; or one graphics escape to write at the preview's top-left cell, with the
/// cells it covers.
public enum Preview: Sendable, Equatable {
    case rows([String])
    case graphics(escape: String, rows: Int, columns: Int)
}

/// Picture previews in the terminal, drawn by libchafa.
public enum TerminalPreview {
    /// Terminal cells are about twice as tall as wide: the cell symbols are drawn for, and
    /// pixels' when the terminal did not say its own.
    static let cellPixels = (width: 10, height: 20)
    static let reset = "\u{1B}[0m"

    /// Renders with libchafa into at most `columns` × `rows` cells, keeping the aspect ratio.
    /// `.symbols`: one String per row, with SGR colour escapes per `colors` (none: no escapes at
    /// all) and a reset at the end of each row; every row exactly as wide as the others in
    /// display columns. `.sixel` / `.kitty`: one escape sequence to write at the preview's
    /// top-left cell, and how many rows and columns it covers, sized in the terminal's
    /// `cell` pixels (`PixelFit`): a sixel picture exactly as many pixels as it should
    /// have, in whole bands, never below the box; a kitty one placed over its cells.
    public static func render(_ image: DecodedImage, columns: Int, rows: Int, mode: PreviewMode, cell: CellPixels? = nil) -> Preview {
        let cell = cell ?? CellPixels(width: cellPixels.width, height: cellPixels.height)!
        let fit = PixelFit(imageWidth: image.width, imageHeight: image.height, columns: columns, rows: rows, cell: cell)
        var width = Int32(clamping: max(1, columns)), height = Int32(clamping: max(1, rows))
        var cellWidth = Int32(cellPixels.width), cellHeight = Int32(cellPixels.height)
        switch mode {
        case .symbols:
            chafa_calc_canvas_geometry(Int32(clamping: image.width), Int32(clamping: image.height), &width, &height,
                                       Float(cellPixels.width) / Float(cellPixels.height), 1, 0)
            width = max(1, min(width, Int32(clamping: max(1, columns))))
            height = max(1, min(height, Int32(clamping: max(1, rows))))
        case .sixel:
            // Cells of one pixel: chafa's canvas is then the picture's own pixels, exactly.
            (width, height, cellWidth, cellHeight) = (Int32(fit.width), Int32(fit.height), 1, 1)
        case .kitty:
            // Kitty scales the picture over the cells named in its escape (c=, r=).
            (width, height, cellWidth, cellHeight) = (Int32(fit.columns), Int32(fit.rows), Int32(cell.width), Int32(cell.height))
        }

        let config = chafa_canvas_config_new()
        defer { chafa_canvas_config_unref(config) }
        chafa_canvas_config_set_geometry(config, width, height)
        chafa_canvas_config_set_cell_geometry(config, cellWidth, cellHeight)
        // Colours not repeated when unchanged, but no cursor movement or repeat sequences: a row
        // is its cells, one after another.
        chafa_canvas_config_set_optimizations(config, CHAFA_OPTIMIZATION_REUSE_ATTRIBUTES)
        switch mode {
        case .symbols(let colors):
            chafa_canvas_config_set_pixel_mode(config, CHAFA_PIXEL_MODE_SYMBOLS)
            chafa_canvas_config_set_canvas_mode(config, canvasMode(colors))
            // Single-width symbols only, so that a row's display width is its cell count.
            let symbols = chafa_symbol_map_new()
            defer { chafa_symbol_map_unref(symbols) }
            chafa_symbol_map_add_by_tags(symbols, ChafaSymbolTags(rawValue: CHAFA_SYMBOL_TAG_BLOCK.rawValue | CHAFA_SYMBOL_TAG_BORDER.rawValue
                                                                    | CHAFA_SYMBOL_TAG_SPACE.rawValue))
            chafa_symbol_map_remove_by_tags(symbols, CHAFA_SYMBOL_TAG_WIDE)
            chafa_canvas_config_set_symbol_map(config, symbols)
        case .sixel:
            chafa_canvas_config_set_pixel_mode(config, CHAFA_PIXEL_MODE_SIXELS)
            chafa_canvas_config_set_canvas_mode(config, CHAFA_CANVAS_MODE_TRUECOLOR)
        case .kitty:
            chafa_canvas_config_set_pixel_mode(config, CHAFA_PIXEL_MODE_KITTY)
            chafa_canvas_config_set_canvas_mode(config, CHAFA_CANVAS_MODE_TRUECOLOR)
        }

        let canvas = chafa_canvas_new(config)
        defer { chafa_canvas_unref(canvas) }
        image.rgba.withUnsafeBufferPointer {
            chafa_canvas_draw_all_pixels(canvas, CHAFA_PIXEL_RGBA8_UNASSOCIATED, $0.baseAddress,
                                         Int32(image.width), Int32(image.height), Int32(image.width * 4))
        }
        let terminal = chafa_term_db_get_fallback_info(chafa_term_db_get_default())
        defer { chafa_term_info_unref(terminal) }
        let printed = chafa_canvas_print(canvas, terminal)!
        let text = String(cString: printed.pointee.str)
        g_string_free(printed, 1)

        switch mode {
        case .symbols(let colors):
            return .rows(symbolRows(text, colors: colors))
        case .sixel, .kitty:
            return .graphics(escape: text, rows: fit.rows, columns: fit.columns)
        }
    }

    private static func canvasMode(_ colors: ColorDepth) -> ChafaCanvasMode {
        switch colors {
        case .none: return CHAFA_CANVAS_MODE_FGBG
        case .ansi16: return CHAFA_CANVAS_MODE_INDEXED_16
        case .ansi256: return CHAFA_CANVAS_MODE_INDEXED_240
        case .trueColor: return CHAFA_CANVAS_MODE_TRUECOLOR
        }
    }

    /// chafa's text cut into rows: without any escape for `.none`, else each ending in a reset.
    static func symbolRows(_ text: String, colors: ColorDepth) -> [String] {
        var rows = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while rows.last.map({ withoutEscapes($0).isEmpty }) == true { rows.removeLast() }
        return rows.map { row in
            if colors == .none { return withoutEscapes(row) }
            return row.hasSuffix(reset) ? row : row + reset
        }
    }

    /// The text with every CSI escape (ESC [ parameters final byte) taken out.
    static func withoutEscapes(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            guard scalar == "\u{1B}" else { out.append(scalar); continue }
            guard scalars.next() == "[" else { continue }
            while let next = scalars.next(), !(0x40...0x7E).contains(next.value) {}
        }
        return String(out)
    }
}
