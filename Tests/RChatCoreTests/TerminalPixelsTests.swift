import RChatCore
import XCTest

/// The terminal's pixels: its answers to `CSI 16 t` / `CSI 14 t` / `CSI c` found among the
/// user's keys (which come back whole and in order), and a picture's place in its box.
final class TerminalPixelsTests: XCTestCase {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    func testTheCellReplyTheTextAreaReplyAndTheAttributes() {
        let r = TerminalReplies(parsing: bytes("\u{1B}[6;17;9t\u{1B}[4;510;900t\u{1B}[?63;4;6c"))
        XCTAssertEqual(r.cell?.width, 9)
        XCTAssertEqual(r.cell?.height, 17)
        XCTAssertEqual(r.textArea?.width, 900)
        XCTAssertEqual(r.textArea?.height, 510)
        XCTAssertTrue(r.complete)
        XCTAssertEqual(r.rest, [])
        XCTAssertEqual(r.cellPixels(columns: 100, rows: 30), CellPixels(width: 9, height: 17), "the cell's own reply first")
    }

    func testTheTextAreaAloneGivesTheCellOverTheCells() {
        let r = TerminalReplies(parsing: bytes("\u{1B}[4;720;1200t\u{1B}[?1;2c"))
        XCTAssertNil(r.cell)
        XCTAssertEqual(r.cellPixels(columns: 100, rows: 30), CellPixels(width: 12, height: 24))
        XCTAssertNil(r.cellPixels(columns: 0, rows: 30), "no cells: no size")
    }

    func testATerminalThatAnswersOnlyTheAttributes() {
        let r = TerminalReplies(parsing: bytes("\u{1B}[?62;22c"))
        XCTAssertTrue(r.complete, "nothing else is coming")
        XCTAssertNil(r.cellPixels(columns: 80, rows: 24))
        XCTAssertFalse(TerminalReplies(parsing: []).complete)
        XCTAssertFalse(TerminalReplies(parsing: bytes("\u{1B}[6;17;9t")).complete, "still waiting for the attributes")
    }

    func testKeysAroundAndBetweenTheRepliesComeBackInOrder() {
        // Typing, an arrow key (ESC [ A), a UTF-8 letter, Alt-x (ESC x) and Esc itself among the replies.
        let typed = "hi\u{1B}[A" + "é" + "\u{1B}x"
        let r = TerminalReplies(parsing: bytes("h" + "\u{1B}[6;20;10t" + "i\u{1B}[A" + "é" + "\u{1B}[?6c" + "\u{1B}x"))
        XCTAssertEqual(r.rest, bytes(typed))
        XCTAssertEqual(r.cellPixels(columns: 80, rows: 24), CellPixels(width: 10, height: 20))
        XCTAssertTrue(r.complete)
        XCTAssertEqual(TerminalReplies(parsing: bytes("\u{1B}")).rest, [0x1B], "a lone Esc is a key")
    }

    func testWhatLooksLikeAReplyButIsNotOneStaysWithTheKeys() {
        for text in ["\u{1B}[6;17t", "\u{1B}[5;17;9t", "\u{1B}[6;;9t", "\u{1B}[6;17;9;1t", "\u{1B}[8;24;80t", "\u{1B}[?c",
                     "\u{1B}[6;17;9", "\u{1B}[6;17;9x", "\u{1B}[1;5C", "\u{1B}[200~", "\u{1B}[I", "\u{1B}O"] {
            let r = TerminalReplies(parsing: bytes(text))
            XCTAssertEqual(r.rest, bytes(text), text.debugDescription)
            XCTAssertNil(r.cell, text.debugDescription)
            XCTAssertNil(r.textArea, text.debugDescription)
            XCTAssertFalse(r.complete, text.debugDescription)
        }
        XCTAssertEqual(TerminalReplies.query, "\u{1B}[16t\u{1B}[14t\u{1B}[c")
    }

    func testNonsenseSizesAreNone() {
        XCTAssertNil(CellPixels(width: 0, height: 20))
        XCTAssertNil(CellPixels(width: 10, height: 5), "shorter than a sixel band")
        XCTAssertNil(CellPixels(width: 600, height: 20))
        XCTAssertNotNil(CellPixels(width: 2, height: 6))
        XCTAssertNotNil(CellPixels(width: 512, height: 512))
        XCTAssertNil(CellPixels(area: 1200, 720, columns: 0, rows: 30))
        XCTAssertNil(TerminalReplies(parsing: bytes("\u{1B}[6;0;0t\u{1B}[?6c")).cellPixels(columns: 80, rows: 24))
        XCTAssertEqual(TerminalReplies(parsing: bytes("\u{1B}[6;0;0t\u{1B}[4;480;800t")).cellPixels(columns: 80, rows: 24),
                       CellPixels(width: 10, height: 20), "a cell reply of zeros falls back on the area")
    }

    // MARK: The picture in its box

    func testAPictureFillsItsBoxOneWayAndKeepsItsProportions() {
        let cells = [CellPixels(width: 12, height: 24)!, CellPixels(width: 7, height: 14)!, CellPixels(width: 9, height: 17)!,
                     CellPixels(width: 10, height: 20)!, CellPixels(width: 2, height: 6)!]
        let images = [(320, 480), (480, 320), (4000, 3000), (8, 8), (1, 1000), (1000, 1), (1, 1)]
        let boxes = [(40, 8), (1, 1), (80, 24), (3, 1)]
        for cell in cells {
            for (iw, ih) in images {
                for (columns, rows) in boxes {
                    let fit = PixelFit(imageWidth: iw, imageHeight: ih, columns: columns, rows: rows, cell: cell)
                    let what = "\(iw)x\(ih) in \(columns)x\(rows) cells of \(cell)"
                    XCTAssertLessThanOrEqual(fit.width, columns * cell.width, what)
                    XCTAssertLessThanOrEqual(fit.height, rows * cell.height, "never below the box: \(what)")
                    XCTAssertEqual(fit.height % PixelFit.sixelBand, 0, "whole sixel bands: \(what)")
                    XCTAssertGreaterThan(fit.width, 0, what)
                    XCTAssertGreaterThan(fit.height, 0, what)
                    XCTAssertLessThanOrEqual(fit.rows, rows, what)
                    XCTAssertLessThanOrEqual(fit.columns, columns, what)
                    XCTAssertEqual(fit.rows, (fit.height + cell.height - 1) / cell.height, "the rows it covers: \(what)")
                    XCTAssertEqual(fit.columns, (fit.width + cell.width - 1) / cell.width, "the columns it covers: \(what)")
                    // Its proportions, to a pixel and a band, unless the box is smaller than that.
                    if fit.width > 1 && fit.height > PixelFit.sixelBand {
                        let drawn = Double(fit.width) / Double(fit.height), own = Double(iw) / Double(ih)
                        let slack = Double(fit.width + 1) / Double(fit.height - PixelFit.sixelBand) - Double(fit.width) / Double(fit.height)
                        XCTAssertLessThanOrEqual(abs(drawn - own), max(slack, 1.0 / Double(fit.height)) + own * Double(PixelFit.sixelBand) / Double(fit.height),
                                                 what)
                    }
                }
            }
        }
    }

    func testTheBoxesOfTheView() {
        // A portrait photo in xterm's DejaVu Sans Mono 14 (12×24): as tall as the 8 rows.
        XCTAssertEqual(PixelFit(imageWidth: 320, imageHeight: 480, columns: 40, rows: 8, cell: CellPixels(width: 12, height: 24)!),
                       PixelFit(width: 128, height: 192, columns: 11, rows: 8))
        // At size 8 (7×14): 112 pixels high, 108 in whole bands, 7.7 rows: 8.
        XCTAssertEqual(PixelFit(imageWidth: 320, imageHeight: 480, columns: 40, rows: 8, cell: CellPixels(width: 7, height: 14)!),
                       PixelFit(width: 72, height: 108, columns: 11, rows: 8))
        // A wide one is as wide as the box, and uses fewer rows.
        XCTAssertEqual(PixelFit(imageWidth: 4000, imageHeight: 1000, columns: 40, rows: 8, cell: CellPixels(width: 10, height: 20)!),
                       PixelFit(width: 400, height: 96, columns: 40, rows: 5))
    }
}
