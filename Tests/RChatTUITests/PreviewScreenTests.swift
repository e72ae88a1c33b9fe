import XCTest
import RChatCore
@testable import RChatTUI

/// Preview rows in the screen model: colours parsed out of SGR into cell styles (so no
/// escape sits in a cell and the diff sees colour changes), pictures placed only where
/// they fit whole.
final class PreviewScreenTests: XCTestCase {
    func testSGRBecomesCellStylesAndNothingElseGetsThrough() {
        let runs = SGRText.runs("\u{1B}[38;2;255;0;10m\u{1B}[48;5;21m▀▀\u{1B}[0m \u{1B}[31;102m▄\u{1B}]2;title\u{07}\u{07}x\u{1B}[7m!\u{1B}[0m")
        XCTAssertEqual(runs.map(\.text), ["▀▀", " ", "▄x", "!"])
        XCTAssertEqual(runs.map(\.column), [0, 2, 3, 5])
        XCTAssertEqual(runs[0].style.foreground, .rgb(255, 0, 10))
        XCTAssertEqual(runs[0].style.background, .indexed(21))
        XCTAssertEqual(runs[1].style, .plain)
        XCTAssertEqual(runs[2].style.foreground, .indexed(1))
        XCTAssertEqual(runs[2].style.background, .indexed(10))
        XCTAssertTrue(runs[3].style.reverse)
        XCTAssertFalse(runs.map(\.text).joined().unicodeScalars.contains { $0.value < 0x20 }, "no control character, no escape")
        XCTAssertEqual(SGRText.parameters(.rgb(1, 2, 3), background: true), "48;2;1;2;3")
        XCTAssertEqual(SGRText.parameters(.indexed(9), background: false), "91")
        XCTAssertEqual(SGRText.parameters(.indexed(200), background: false), "38;5;200")
    }

    func testTheDiffSeesAChangeOfColourAlone() {
        var a = Screen(rows: 1, columns: 4)
        var b = a
        a.put("▀▀", row: 0, column: 0, style: CellStyle(foreground: .rgb(1, 1, 1)))
        b.put("▀▀", row: 0, column: 0, style: CellStyle(foreground: .rgb(1, 1, 1)))
        XCTAssertTrue(ScreenDiff.runs(from: a, to: b).isEmpty)
        b.put("▀", row: 0, column: 1, style: CellStyle(foreground: .rgb(9, 9, 9)))
        let runs = ScreenDiff.runs(from: a, to: b)
        XCTAssertEqual(runs.map(\.column), [1])
        XCTAssertEqual(runs.first?.style.foreground, .rgb(9, 9, 9))
    }

    private func photoConversation(count: Int = 0) -> (FakeChatModel, ChatView, MessageID) {
        let model = FakeChatModel()
        model.contact("Sam")
        let photo = model.addAttachment("Sam", .incoming, .photo, name: "beach.jpg", size: 100, transfer: .complete(path: "/x/beach.jpg"))
        model.fill("Sam", count: count)
        let view = makeView(model, options: TUIOptions(timeZone: utc, environment: ["RCHAT_GRAPHICS": "symbols", "NO_COLOR": "1"]),
                            open: "Sam")
        return (model, view, photo)
    }

    func testPreviewRowsGoUnderThePhotosLineInTheirColours() {
        let (_, view, photo) = photoConversation()
        _ = view.frame()
        var state = view.state
        let red = CellStyle(foreground: .rgb(255, 0, 0), background: .rgb(0, 0, 255))
        state.previews = [photo: .cells([[PreviewRun(column: 0, text: "▀▀▀", style: red)], [PreviewRun(column: 1, text: "▄", style: .plain)]])]
        var screen = Screen(rows: 0, columns: 0)
        Renderer.render(state, to: &screen)
        guard let line = screen.position(of: "Photo · beach.jpg"), let top = screen.position(of: "▀▀▀") else { return XCTFail(screen.dump) }
        XCTAssertEqual(top.row, line.row + 1, screen.dump)
        XCTAssertEqual(top.column, line.column)
        XCTAssertEqual(screen[top.row, top.column].style, red)
        XCTAssertEqual(screen.position(of: "▄")?.row, line.row + 2)
        XCTAssertEqual(screen.position(of: "▄")?.column, line.column + 1)
    }

    func testAPictureIsPlacedOnlyWhereItFitsWholeAndNeverUnderAnOverlay() {
        let (_, view, photo) = photoConversation(count: 3)
        _ = view.frame()
        var state = view.state
        let image = ScreenImage(row: 0, column: 0, rows: 4, columns: 10, kind: .kitty, key: "k", escape: "\u{1B}_Gdata\u{1B}\\")
        state.previews = [photo: .graphics(image)]
        var screen = Screen(rows: 0, columns: 0)
        Renderer.render(state, to: &screen)
        guard let line = screen.position(of: "Photo · beach.jpg") else { return XCTFail(screen.dump) }
        XCTAssertEqual(screen.images.count, 1)
        XCTAssertEqual(screen.images.first?.row, line.row + 1)
        XCTAssertEqual(screen.images.first?.column, line.column)
        for row in line.row + 1...line.row + 4 {
            for column in line.column..<line.column + 10 {
                XCTAssertEqual(screen[row, column].character, " ", "blank cells under the picture: \(screen.dump)")
            }
        }

        // Scrolled so that only part of it would show: not drawn at all.
        state.anchor = Anchor(item: 0, linesBelow: 2)
        Renderer.render(state, to: &screen)
        XCTAssertTrue(screen.images.isEmpty, screen.dump)
        state.anchor = nil
        state.overlay = Overlay(kind: .help, title: "Help", lines: [Overlay.Line("x")])
        Renderer.render(state, to: &screen)
        XCTAssertTrue(screen.images.isEmpty, "a picture would cover the box")
    }

    /// Pictures are written once where they are; again only when they move, when their rows
    /// were repainted, or after a full redraw; where one went its rows are repainted; kitty's
    /// are all deleted and written again when any moved or went.
    func testPicturesAreWrittenOncePerPlaceAndClearedWhenTheyGo() {
        func image(_ kind: ScreenImage.Kind, row: Int, key: String = "a") -> ScreenImage {
            ScreenImage(row: row, column: 10, rows: 3, columns: 8, kind: kind, key: key, escape: "<\(key)>")
        }
        let sixel = image(.sixel, row: 4)
        XCTAssertEqual(ImageWrites.sequence(from: [], to: [sixel], repainted: [], full: false), "\u{1B}7\u{1B}[5;11H<a>\u{1B}8")
        XCTAssertEqual(ImageWrites.sequence(from: [sixel], to: [sixel], repainted: [], full: false), "", "once per place")
        XCTAssertEqual(ImageWrites.sequence(from: [sixel], to: [sixel], repainted: [1, 9], full: false), "", "rows of others")
        XCTAssertEqual(ImageWrites.sequence(from: [sixel], to: [sixel], repainted: [6], full: false), "\u{1B}7\u{1B}[5;11H<a>\u{1B}8",
                       "ncurses painted over it")
        XCTAssertEqual(ImageWrites.sequence(from: [sixel], to: [sixel], repainted: [], full: true), "\u{1B}7\u{1B}[5;11H<a>\u{1B}8")
        let moved = image(.sixel, row: 2)
        XCTAssertEqual(ImageWrites.rowsToRepaint(from: [sixel], to: [moved], screenRows: 24), [4, 5, 6])
        XCTAssertEqual(ImageWrites.sequence(from: [sixel], to: [moved], repainted: [4, 5, 6], full: false), "\u{1B}7\u{1B}[3;11H<a>\u{1B}8")
        XCTAssertEqual(ImageWrites.rowsToRepaint(from: [sixel], to: [], screenRows: 5), [4], "clipped to the screen")
        XCTAssertEqual(ImageWrites.sequence(from: [sixel], to: [], repainted: [4, 5, 6], full: false), "")

        let kitty = image(.kitty, row: 4), other = image(.kitty, row: 12, key: "b")
        XCTAssertEqual(ImageWrites.sequence(from: [kitty, other], to: [kitty, other], repainted: [5], full: false), "",
                       "kitty's pictures are not in the cells: a repaint leaves them")
        XCTAssertEqual(ImageWrites.sequence(from: [kitty, other], to: [other], repainted: [], full: false),
                       "\u{1B}7" + ImageWrites.kittyDeleteAll + "\u{1B}[13;11H<b>\u{1B}8", "one went: all deleted, the other again")
        XCTAssertEqual(ImageWrites.sequence(from: [kitty], to: [], repainted: [], full: false),
                       "\u{1B}7" + ImageWrites.kittyDeleteAll + "\u{1B}8", "scrolled away: deleted")
        XCTAssertEqual(ImageWrites.sequence(from: [kitty], to: [kitty], repainted: [], full: true),
                       "\u{1B}7" + ImageWrites.kittyDeleteAll + "\u{1B}[5;11H<a>\u{1B}8")
    }
}
