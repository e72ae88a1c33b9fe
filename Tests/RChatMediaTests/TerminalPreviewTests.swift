import RChatCore
@testable import RChatMedia
import XCTest

final class TerminalPreviewTests: XCTestCase {
    /// 200×100: a red-to-blue gradient with a white square in the middle.
    static let picture: DecodedImage = {
        var rgba: [UInt8] = []
        for y in 0..<100 {
            for x in 0..<200 {
                let square = (80..<120).contains(x) && (30..<70).contains(y)
                rgba += square ? [255, 255, 255, 255] : [UInt8(255 - x * 255 / 199), 40, UInt8(x * 255 / 199), 255]
            }
        }
        return DecodedImage(width: 200, height: 100, rgba: rgba)
    }()

    private func rows(_ mode: PreviewMode, columns: Int, rows: Int) throws -> [String] {
        guard case .rows(let lines) = TerminalPreview.render(Self.picture, columns: columns, rows: rows, mode: mode) else {
            throw XCTSkip("symbols mode drew graphics")
        }
        return lines
    }

    func testSymbolRowsFitTheBoxAndAreAllAsWideAsEachOther() throws {
        for colors in [ColorDepth.none, .ansi16, .ansi256, .trueColor] {
            for (columns, rowLimit) in [(80, 40), (30, 5), (7, 30), (1, 1)] {
                let lines = try rows(.symbols(colors: colors), columns: columns, rows: rowLimit)
                let what = "\(colors) in \(columns)×\(rowLimit)"
                XCTAssertFalse(lines.isEmpty, what)
                XCTAssertLessThanOrEqual(lines.count, rowLimit, what)
                let widths = Set(lines.map { TextWidth.columns(of: TerminalPreview.withoutEscapes($0)) })
                XCTAssertEqual(widths.count, 1, "\(what): row widths \(widths)")
                XCTAssertLessThanOrEqual(widths.first ?? .max, columns, what)
                XCTAssertGreaterThan(widths.first ?? 0, 0, what)
                for line in lines {
                    XCTAssertFalse(line.contains("\n"), what)
                    XCTAssertFalse(TerminalPreview.withoutEscapes(line).unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F },
                                   "\(what): no control characters besides the colour escapes")
                    if colors == .none {
                        XCTAssertFalse(line.contains("\u{1B}"), "\(what): no escapes at all")
                    } else {
                        XCTAssertTrue(line.hasSuffix("\u{1B}[0m"), "\(what): each row ends with a reset")
                    }
                }
            }
        }
    }

    func testTheAspectRatioIsKeptWithCellsTwiceAsTallAsWide() throws {
        // 200×100 pixels in cells of 1:2 → twice as many columns as rows... times two: 4:1.
        let wide = try rows(.symbols(colors: .trueColor), columns: 80, rows: 40)
        XCTAssertEqual(TextWidth.columns(of: TerminalPreview.withoutEscapes(wide[0])), 80)
        XCTAssertTrue((19...21).contains(wide.count), "\(wide.count) rows")
        // Limited by rows instead: 10 rows → about 40 columns.
        let short = try rows(.symbols(colors: .trueColor), columns: 200, rows: 10)
        XCTAssertEqual(short.count, 10)
        XCTAssertTrue((38...42).contains(TextWidth.columns(of: TerminalPreview.withoutEscapes(short[0]))))
    }

    func testColourEscapesFollowTheDepth() throws {
        let trueColor = try rows(.symbols(colors: .trueColor), columns: 40, rows: 20).joined()
        XCTAssertTrue(trueColor.contains(";2;"), "24-bit colours: 38;2;r;g;b / 48;2;r;g;b")
        let palette = try rows(.symbols(colors: .ansi256), columns: 40, rows: 20).joined()
        XCTAssertTrue(palette.contains(";5;"), "the 256-colour palette: 38;5;n")
        XCTAssertFalse(palette.contains(";2;"))
        let ansi = try rows(.symbols(colors: .ansi16), columns: 40, rows: 20).joined()
        XCTAssertFalse(ansi.contains(";5;") || ansi.contains(";2;"), "16 colours use the plain SGR codes")
        XCTAssertTrue(ansi.contains("\u{1B}["))
    }

    func testSixelAndKittyAreOneEscapeCoveringAtMostTheBox() {
        guard case .graphics(let sixel, let sixelRows, let sixelColumns) = TerminalPreview.render(Self.picture, columns: 60, rows: 20, mode: .sixel) else {
            return XCTFail("sixel mode drew symbols")
        }
        XCTAssertTrue(sixel.hasPrefix("\u{1B}P"), "a sixel image is a DCS sequence")
        XCTAssertTrue(sixel.hasSuffix("\u{1B}\\"), "ended by ST")
        XCTAssertTrue((1...20).contains(sixelRows))
        XCTAssertTrue((1...60).contains(sixelColumns))

        guard case .graphics(let kitty, let kittyRows, let kittyColumns) = TerminalPreview.render(Self.picture, columns: 60, rows: 20, mode: .kitty) else {
            return XCTFail("kitty mode drew symbols")
        }
        XCTAssertTrue(kitty.hasPrefix("\u{1B}_G"), "kitty graphics are APC G sequences")
        XCTAssertTrue((1...20).contains(kittyRows))
        XCTAssertTrue((1...60).contains(kittyColumns))
        XCTAssertEqual(kittyRows, sixelRows)
        XCTAssertEqual(kittyColumns, sixelColumns)
    }

    /// A sixel picture is the pixels `PixelFit` says, in the terminal's own cells: its raster
    /// attributes (`"1;1;W;H`) name them, and its bands (`-` ends one) never reach below the
    /// box; a kitty one is placed over the cells it covers (c=, r=).
    func testPixelsAreSizedByTheTerminalsCell() throws {
        for (cell, columns, rows) in [(CellPixels(width: 12, height: 24)!, 40, 8), (CellPixels(width: 7, height: 14)!, 40, 8),
                                      (CellPixels(width: 9, height: 17)!, 40, 3), (CellPixels(width: 10, height: 20)!, 5, 8)] {
            let fit = PixelFit(imageWidth: Self.picture.width, imageHeight: Self.picture.height, columns: columns, rows: rows, cell: cell)
            guard case .graphics(let sixel, let r, let c) = TerminalPreview.render(Self.picture, columns: columns, rows: rows, mode: .sixel, cell: cell) else {
                return XCTFail("sixel mode drew symbols")
            }
            XCTAssertEqual([r, c], [fit.rows, fit.columns], "\(cell)")
            let raster = try XCTUnwrap(sixel.range(of: "\"1;1;"), "raster attributes")
            let numbers = sixel[raster.upperBound...].prefix { $0.isNumber || $0 == ";" }.split(separator: ";").compactMap { Int($0) }
            XCTAssertEqual(numbers, [fit.width, fit.height], "the picture's pixels in cells of \(cell)")
            // Each band but the last ends with `-` (a band ended right before ST draws none more).
            let body = sixel.hasSuffix("-\u{1B}\\") ? sixel.dropLast(3) : sixel.dropLast(2)
            let bands = body.filter { $0 == "-" }.count + 1
            XCTAssertEqual(bands * PixelFit.sixelBand, fit.height, "\(cell): \(sixel.suffix(12).debugDescription)")
            XCTAssertLessThanOrEqual(bands * PixelFit.sixelBand, rows * cell.height, "no band below the box: \(cell)")

            guard case .graphics(let kitty, let kr, let kc) = TerminalPreview.render(Self.picture, columns: columns, rows: rows, mode: .kitty, cell: cell) else {
                return XCTFail("kitty mode drew symbols")
            }
            XCTAssertEqual([kr, kc], [fit.rows, fit.columns])
            XCTAssertTrue(kitty.contains(",c=\(fit.columns),r=\(fit.rows),"), "placed over its cells: \(kitty.prefix(60))")
        }
    }
}
