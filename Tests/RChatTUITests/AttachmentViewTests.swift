import Foundation
import XCTest
import RChatCore
@testable import RChatTUI

/// An attachment's line: kind, name, size, the status glyph; a progress bar with percent and
/// a rate the view measures; why one was discarded; and how all of it fits narrow panes.
final class AttachmentLineTests: XCTestCase {
    /// Sizes and rates are shown 1024-based (`ByteCount`, Core): round numbers of these read round.
    private let mb: UInt64 = 1_048_576

    private func options(_ environment: [String: String] = [:]) -> TUIOptions {
        TUIOptions(timeZone: utc, environment: environment)
    }

    func testALineWithKindNameSizeAndTheStatusGlyph() {
        let model = FakeChatModel()
        model.contact("Sam")
        model.addAttachment("Sam", .outgoing, .file, name: "report.pdf", size: 1_234_567, transfer: .complete(path: "/x/report.pdf"),
                            status: .delivered)
        model.addAttachment("Sam", .incoming, .voice, name: "voice-message.ogg", size: 48_000, transfer: .complete(path: "/x/v.ogg"))
        let screen = makeView(model, options: options(), open: "Sam").frame()
        guard let file = screen.position(of: "File · report.pdf · 1.2 MB") else { return XCTFail(screen.dump) }
        XCTAssertTrue(screen.line(file.row).contains(" You "), screen.dump)
        XCTAssertEqual(screen[file.row, 78].character, "√", "Delivered, at the edge as for text: \(screen.dump)")
        XCTAssertTrue(screen[file.row, file.column].style.bold, "the kind stands out")
        guard let voice = screen.position(of: "Voice message · voice-message.ogg · 46.9 KB") else { return XCTFail(screen.dump) }
        XCTAssertTrue(screen.line(voice.row).contains(" Sam "), "written by Sam, not a row: \(screen.dump)")
        XCTAssertFalse(screen.contains("can't"), "no longer the line for what this version cannot show: \(screen.dump)")
    }

    func testAProgressBarWithPercentAndARateOnlyFromTwoReadings() {
        let model = FakeChatModel()
        model.contact("Sam")
        let id = model.addAttachment("Sam", .incoming, .file, name: "big.iso", size: 10 * mb, transfer: .moving(done: 0))
        let out = model.addAttachment("Sam", .outgoing, .photo, name: "cat.jpg", size: 4 * mb, transfer: .moving(done: mb))
        let clock = HandClock()
        let view = makeView(model, options: options(), open: "Sam", clock: clock)
        var screen = view.frame()
        guard let bar = screen.position(of: "························ 0%") else { return XCTFail(screen.dump) }
        XCTAssertFalse(screen.line(bar.row).contains("/s"), "one reading: no rate yet: \(screen.dump)")
        XCTAssertTrue(screen.contains("######·················· 25%"), "the outgoing one too: \(screen.dump)")
        XCTAssertEqual(view.pollMilliseconds, 250, "read again four times a second while something moves")

        // Read again only once a quarter second passed.
        model.setTransfer("Sam", id, .moving(done: mb))
        clock.advance(0.1)
        XCTAssertTrue(view.frame().contains(" 0%"), "not read again before its time")
        clock.advance(0.9)
        model.setTransfer("Sam", out, .moving(done: mb + mb / 2))
        screen = view.frame()
        XCTAssertTrue(screen.contains("##······················ 10% · 1.0 MB/s"), screen.dump)
        XCTAssertTrue(screen.contains(" 37% · 512.0 KB/s"), screen.dump)

        // Smoothed over about two seconds: a stall brings it down, not to nothing at once.
        clock.advance(1)
        model.setTransfer("Sam", id, .moving(done: 3 * mb))
        XCTAssertTrue(view.frame().contains(" 30% · 1.5 MB/s"), view.frame().dump)
        clock.advance(1)
        XCTAssertTrue(view.frame().contains(" 30% · 1.0 MB/s"), "2 MB over the last 2 s: \(view.frame().dump)")

        // Done: the bar goes, and nothing is read again.
        model.setTransfer("Sam", id, .complete(path: "/x/big.iso"))
        model.setTransfer("Sam", out, .complete(path: "/x/cat.jpg"))
        clock.advance(1)
        screen = view.frame()
        XCTAssertFalse(screen.contains("%"), screen.dump)
        XCTAssertNil(view.pollMilliseconds)
        XCTAssertTrue(view.state.transfers.isEmpty)
    }

    /// A file being sent that waits says for what, where the rate would only say 0 B/s; once
    /// it moves again, the rate comes back.
    func testAWaitingFileSaysWhatItWaitsForInsteadOfARate() {
        let model = FakeChatModel()
        model.contact("Sam")
        let id = model.addAttachment("Sam", .outgoing, .file, name: "big.iso", size: 4 * mb, transfer: .moving(done: mb, waiting: .room))
        let clock = HandClock()
        let view = makeView(model, options: options(), open: "Sam", clock: clock)
        var screen = view.frame()
        let g = Glyphs.unicode
        XCTAssertTrue(screen.contains(String(repeating: g.barDone, count: 2) + String(repeating: g.barLeft, count: 7) + " 25% · waiting for room at the relay"), "the bar makes room for the words: \(screen.dump)")
        clock.advance(1)
        screen = view.frame()
        XCTAssertTrue(screen.contains(" 25% · waiting for room at the relay"), "not 0 B/s: \(screen.dump)")
        XCTAssertFalse(screen.contains("B/s"), screen.dump)

        model.setTransfer("Sam", id, .moving(done: mb, waiting: .contact))
        clock.advance(1)
        screen = view.frame()
        XCTAssertTrue(screen.contains(" 25% · waiting for Sam to come back"), screen.dump)

        model.setTransfer("Sam", id, .moving(done: 2 * mb))
        clock.advance(1)
        screen = view.frame()
        XCTAssertTrue(screen.contains(" 50% · "), screen.dump)
        XCTAssertTrue(screen.contains("B/s"), "moving again: its rate: \(screen.dump)")
        XCTAssertFalse(screen.contains("waiting"), screen.dump)
    }

    /// Without a UTF-8 locale: ASCII separators and bar, nothing else.
    func testASCIIMode() {
        let model = FakeChatModel()
        model.contact("Sam")
        model.addAttachment("Sam", .incoming, .file, name: "naïve.txt", size: 4 * mb, transfer: .moving(done: mb))
        let screen = makeView(model, glyphs: .ascii, options: options(), open: "Sam").frame()
        XCTAssertTrue(screen.contains("File | na?ve.txt | 4.0 MB"), screen.dump)
        XCTAssertTrue(screen.contains("######------------------ 25%"), screen.dump)
        XCTAssertTrue(screen.cells.allSatisfy { $0.character.isASCII }, screen.dump)
    }

    /// The engine's `transferMoved` reads the item at once, and that reading counts too.
    func testTheEnginesTransferMovedIsAReading() {
        let model = FakeChatModel()
        let sam = model.contact("Sam")
        let id = model.addAttachment("Sam", .incoming, .file, name: "big.iso", size: 10 * mb, transfer: .moving(done: 0))
        let clock = HandClock()
        let view = makeView(model, options: options(), open: "Sam", clock: clock)
        XCTAssertTrue(view.frame().contains(" 0%"))
        model.setTransfer("Sam", id, .moving(done: mb / 2))
        clock.advance(0.1)
        XCTAssertTrue(view.frame().contains(" 0%"), "not due by itself yet")
        view.handle([.transferMoved(conversation: sam, id: id)])
        XCTAssertTrue(view.frame().contains(" 5% · 5.0 MB/s"), view.frame().dump)
        model.setTransfer("Sam", id, .discarded(reason: "It was cut short."))
        view.handle([.transferMoved(conversation: sam, id: id)])
        XCTAssertTrue(view.frame().contains("It was cut short."), view.frame().dump)
        XCTAssertTrue(view.state.transfers.isEmpty)
    }

    /// A frame while a transfer moves (each one reading the items again, as at four a
    /// second) in a long conversation with a photo: well under the 30 ms a frame may take.
    func testFramesStayFastWhileATransferMoves() {
        let model = FakeChatModel()
        model.contact("Sam")
        model.fill("Sam", count: 2_000)
        let id = model.addAttachment("Sam", .incoming, .file, name: "big.iso", size: 100 * mb, transfer: .moving(done: 0))
        let clock = HandClock()
        let view = makeView(model, options: options(), open: "Sam", clock: clock)
        var times: [Double] = []
        for n in 1...200 {
            model.setTransfer("Sam", id, .moving(done: UInt64(n) * mb / 4))
            clock.advance(0.25)
            let start = Date()
            _ = view.frame()
            times.append(Date().timeIntervalSince(start))
        }
        XCTAssertTrue(view.frame().contains("50% · 1.0 MB/s"), view.frame().dump)
        let median = times.sorted()[times.count / 2] * 1000, worst = times.max()! * 1000
        print("frame while a transfer moves: median \(String(format: "%.2f", median)) ms, worst \(String(format: "%.2f", worst)) ms")
        XCTAssertLessThan(median, 30)
    }

    func testRatesAreMeasuredOverTheLastTwoSeconds() {
        var rates = TransferRates()
        let id = MessageID(high: 1, low: 2)
        rates.record(id, done: 0, at: 10)
        XCTAssertNil(rates.rate(of: id), "one reading")
        rates.record(id, done: 0, at: 10)
        XCTAssertNil(rates.rate(of: id), "two readings at one time")
        rates.record(id, done: 1_000, at: 11)
        XCTAssertEqual(rates.rate(of: id), 1_000)
        rates.record(id, done: 5_000, at: 12)
        rates.record(id, done: 5_000, at: 14)
        XCTAssertEqual(rates.rate(of: id), 0, "nothing moved in the last two seconds")
        rates.record(id, done: 100, at: 15)
        XCTAssertNil(rates.rate(of: id), "started over: measured afresh")
        rates.keep(only: [])
        XCTAssertTrue(rates.isEmpty)
    }

    func testADiscardedFileSaysWhy() {
        let model = FakeChatModel()
        model.contact("Sam")
        model.addAttachment("Sam", .incoming, .photo, name: "beach.jpg", size: 2_000, transfer: .discarded(reason: "Its contents did not match: discarded."))
        let screen = makeView(model, options: options(), open: "Sam").frame()
        guard let line = screen.position(of: "Photo · beach.jpg · 2.0 KB"),
              let reason = screen.position(of: "Its contents did not match: discarded.") else { return XCTFail(screen.dump) }
        XCTAssertEqual(reason.row, line.row + 1, screen.dump)
        XCTAssertEqual(reason.column, line.column)
        XCTAssertEqual(screen[reason.row, reason.column].style.role, .warning)
    }

    /// Wide names are cut with an ellipsis, never past the edge; the bar shrinks, then goes;
    /// control characters in a name are shown as stand-ins, never sent.
    func testNarrowPanesWideNamesAndHostileNames() {
        let model = FakeChatModel()
        model.contact("Sam")
        model.addAttachment("Sam", .incoming, .file, name: "漢字漢字漢字漢字漢字漢字漢字漢字.txt", size: 5 * mb, transfer: .moving(done: 5 * mb / 2))
        model.addAttachment("Sam", .incoming, .file, name: "a\u{1B}[2Jb\nc.txt", size: 10, transfer: .complete(path: "/x"))
        for columns in [40, 52, 80, 120] {
            let screen = makeView(model, columns: columns, options: options(), open: "Sam").frame()
            guard let head = screen.position(of: "File · ") else { return XCTFail("\(columns): \(screen.dump)") }
            let line = screen.line(head.row)
            XCTAssertTrue(line.hasSuffix("· 5.0 MB"), "the size stays whole at \(columns): \(screen.dump)")
            XCTAssertTrue(line.contains("漢"), "some of the name at \(columns)")
            if columns < 100 { XCTAssertTrue(line.contains("…"), "cut with an ellipsis at \(columns): \(screen.dump)") }
            XCTAssertLessThanOrEqual(TextWidth.columns(of: line), columns)
            let progress = screen.line(head.row + 1)
            XCTAssertTrue(progress.hasSuffix("50%"), "\(columns): \(screen.dump)")
            XCTAssertLessThanOrEqual(TextWidth.columns(of: progress), columns)
            XCTAssertTrue(screen.contains("a␛[2Jb␤c.txt"), "stand-ins for the controls at \(columns): \(screen.dump)")
            XCTAssertFalse(screen.text.joined().contains("\u{1B}"))
        }
        // The bar gives way to the percent and the rate when the text is this narrow.
        let pane = ConversationPane(width: 30, height: 10, glyphs: .unicode, time: TimeText(timeZone: utc), contact: "Sam",
                                    selected: nil, newLine: nil)
        let narrow = pane.progress(done: 1, of: 4, rate: Double(2 * mb)).map(\.0).joined()
        XCTAssertEqual(narrow, "25% · 2.0 MB/s")
        let wider = ConversationPane(width: 40, height: 10, glyphs: .ascii, time: TimeText(timeZone: utc), contact: "Sam",
                                     selected: nil, newLine: nil).progress(done: 1, of: 4, rate: nil).map(\.0).joined()
        XCTAssertEqual(wider, String(repeating: "#", count: 5) + String(repeating: "-", count: 17) + " 25%", "22 columns of bar")
    }
}
