import Foundation
import XCTest
import RChatCore
import RChatMedia
@testable import RChatTUI

/// What the view does through RChatMedia, for real: a photo's preview decoded from a PNG on
/// disk and rendered by libchafa off the frame's path; which kind of preview a terminal gets;
/// playing a voice message and recording one through fake player and recorder programs on
/// PATH (no sound card in CI).
final class MediaViewTests: FolderTestCase {
    /// An 8×8 PNG: red on top, blue below (written by zlib and CRC by hand once, kept here
    /// as bytes so the test needs nothing from outside).
    static let redOverBluePNG: [UInt8] = [
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x08,
        0x00, 0x00, 0x00, 0x08, 0x08, 0x02, 0x00, 0x00, 0x00, 0x4b, 0x6d, 0x29, 0xdc, 0x00, 0x00, 0x00, 0x16, 0x49, 0x44, 0x41,
        0x54, 0x78, 0xda, 0x63, 0xf8, 0xcf, 0xc0, 0x80, 0x15, 0x31, 0x50, 0x51, 0x82, 0xaa, 0x86, 0x61, 0x97, 0x00, 0x00, 0xe9,
        0x30, 0x3f, 0xc1, 0x70, 0x48, 0x8c, 0xd8, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ]

    /// 16-bit mono 48 kHz PCM WAV of a 440 Hz tone.
    static func toneWAV(seconds: Double) -> Data {
        let samples = Int(48_000 * seconds)
        var bytes: [UInt8] = []
        func u32(_ v: UInt32) { bytes += withUnsafeBytes(of: v.littleEndian, Array.init) }
        func u16(_ v: UInt16) { bytes += withUnsafeBytes(of: v.littleEndian, Array.init) }
        bytes += Array("RIFF".utf8); u32(UInt32(36 + samples * 2)); bytes += Array("WAVEfmt ".utf8)
        u32(16); u16(1); u16(1); u32(48_000); u32(96_000); u16(2); u16(16)
        bytes += Array("data".utf8); u32(UInt32(samples * 2))
        for n in 0..<samples { u16(UInt16(bitPattern: Int16(8000 * sin(2 * Double.pi * 440 * Double(n) / 48_000)))) }
        return Data(bytes)
    }

    private func photoView(environment: [String: String], rows: Int = 24, columns: Int = 80,
                           bytes: [UInt8] = redOverBluePNG) -> (FakeChatModel, ChatView) {
        let dir = folder("photo")
        let path = dir + "/beach.png"
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let model = FakeChatModel()
        model.contact("Sam")
        model.addAttachment("Sam", .incoming, .photo, name: "beach.png", size: UInt64(bytes.count), transfer: .complete(path: path))
        model.addMessage("Sam", .incoming, "nice, right?")
        return (model, makeView(model, rows: rows, columns: columns, options: TUIOptions(timeZone: utc, environment: environment), open: "Sam"))
    }

    /// Rows under the photo's line until the next message.
    private func previewRows(_ screen: Screen) -> Range<Int>? {
        guard let line = screen.position(of: "Photo · beach.png"), let next = screen.position(of: "nice, right?") else { return nil }
        return (line.row + 1)..<next.row
    }

    func testAPhotosPreviewIsRenderedOffTheFrameInColourAndKept() {
        let (_, view) = photoView(environment: ["RCHAT_GRAPHICS": "symbols", "COLORTERM": "truecolor", "TERM": "xterm-256color"])
        let first = view.frame()
        XCTAssertEqual(previewRows(first)?.count, 0, "nothing yet: the frame did not wait for the decoder: \(first.dump)")
        XCTAssertTrue(eventually { self.previewRows(view.frame())?.isEmpty == false }, "the preview arrives: \(view.frame().dump)")
        XCTAssertTrue(eventually { view.previewCache.idle })
        let screen = view.frame()
        guard let rows = previewRows(screen), let line = screen.position(of: "Photo · beach.png") else { return XCTFail(screen.dump) }
        XCTAssertLessThanOrEqual(rows.count, ConversationPane.previewRows)
        var colors: [TerminalColor] = []
        for row in rows {
            for column in line.column..<min(screen.columns, line.column + ConversationPane.previewColumns) {
                let style = screen[row, column].style
                colors += [style.foreground, style.background].compactMap { $0 }
            }
            for column in (line.column + ConversationPane.previewColumns)..<screen.columns {
                XCTAssertFalse(screen[row, column].style.hasOwnColors, "no wider than 40 columns")
            }
        }
        let reddish = colors.contains { if case .rgb(let r, let g, let b) = $0 { r > 200 && g < 60 && b < 60 } else { false } }
        let bluish = colors.contains { if case .rgb(let r, let g, let b) = $0 { b > 200 && r < 60 && g < 60 } else { false } }
        XCTAssertTrue(reddish && bluish, "the picture's own colours: \(colors.prefix(8))")
        XCTAssertFalse(screen.text.joined().contains("\u{1B}"), "no escape in any cell")

        // Kept: more frames render nothing again, and stay fast.
        let start = Date()
        for _ in 0..<100 { XCTAssertEqual(view.frame(), screen) }
        let perFrame = Date().timeIntervalSince(start) / 100
        XCTAssertTrue(view.previewCache.idle)
        XCTAssertLessThan(perFrame, 0.030, "a frame with a preview on screen: \(perFrame * 1000) ms")
        print("frame with a preview on screen: \(String(format: "%.2f", perFrame * 1000)) ms")
    }

    func testNoColourAndNotAPicture() {
        let (_, plain) = photoView(environment: ["RCHAT_GRAPHICS": "symbols", "NO_COLOR": "1"])
        _ = plain.frame()
        XCTAssertTrue(eventually { self.previewRows(plain.frame())?.isEmpty == false }, plain.frame().dump)
        let screen = plain.frame()
        XCTAssertFalse(screen.cells.contains { $0.style.hasOwnColors }, "NO_COLOR: no colour at all")

        let (_, junk) = photoView(environment: ["RCHAT_GRAPHICS": "symbols"], bytes: Array("not a picture at all".utf8))
        _ = junk.frame()
        XCTAssertTrue(eventually { junk.previewCache.idle })
        let shown = junk.frame()
        XCTAssertEqual(previewRows(shown)?.count, 0, "no preview, the line stays: \(shown.dump)")
        XCTAssertTrue(junk.previewCache.idle, "not tried again")
    }

    func testKittyGraphicsInAFullSizeViewSymbolsInASmallOne() {
        let (_, view) = photoView(environment: ["TERM": "xterm-kitty"])
        _ = view.frame()
        XCTAssertTrue(eventually { !view.frame().images.isEmpty }, view.frame().dump)
        let screen = view.frame()
        guard let image = screen.images.first, let line = screen.position(of: "Photo · beach.png") else { return XCTFail(screen.dump) }
        XCTAssertTrue(image.escape.hasPrefix("\u{1B}_G"), "kitty's graphics protocol")
        XCTAssertEqual(image.row, line.row + 1)
        XCTAssertEqual(image.column, line.column)
        XCTAssertEqual(previewRows(screen)?.count, image.rows, "blank rows kept for it")

        let (_, small) = photoView(environment: ["TERM": "xterm-kitty"], rows: 23)
        _ = small.frame()
        XCTAssertTrue(eventually { self.previewRows(small.frame())?.isEmpty == false }, small.frame().dump)
        XCTAssertTrue(small.frame().images.isEmpty, "below 80×24: symbols")
    }

    func testWhichPreviewATerminalGets() {
        func mode(_ environment: [String: String], rows: Int = 24, columns: Int = 80, unicode: Bool = true) -> PreviewMode? {
            PreviewStyle.mode(environment: environment, rows: rows, columns: columns, unicode: unicode)
        }
        XCTAssertEqual(mode(["TERM": "xterm-256color"]), .symbols(colors: .ansi256))
        XCTAssertEqual(mode(["TERM": "xterm", "COLORTERM": "truecolor"]), .symbols(colors: .trueColor))
        XCTAssertEqual(mode(["TERM": "xterm", "NO_COLOR": "1"]), .symbols(colors: .none))
        XCTAssertEqual(mode(["TERM": "linux"]), .symbols(colors: .ansi16))
        XCTAssertEqual(mode(["TERM": "xterm-kitty"]), .kitty)
        XCTAssertEqual(mode(["TERM": "xterm-256color", "KITTY_WINDOW_ID": "3"]), .kitty)
        XCTAssertEqual(mode(["TERM": "xterm-256color", "RCHAT_GRAPHICS": "sixel"]), .sixel)
        XCTAssertEqual(mode(["TERM": "xterm-kitty", "RCHAT_GRAPHICS": "symbols"]), .symbols(colors: .trueColor))
        XCTAssertEqual(mode(["TERM": "xterm-kitty", "RCHAT_GRAPHICS": "sixel"]), .sixel)
        XCTAssertEqual(mode(["TERM": "xterm-kitty"], columns: 79), .symbols(colors: .trueColor), "graphics only in 80×24 or more")
        XCTAssertNil(mode(["TERM": "xterm"], unicode: false), "symbols are Unicode blocks: none in ASCII mode")
        XCTAssertEqual(mode(["TERM": "xterm-kitty"], unicode: false), .kitty)
    }

    /// A voice message and Sam's conversation with it selected; `p` plays it through a fake
    /// `aplay` that copies what it was given.
    func testPlayDecodesToAPrivateWAVAndStartsThePlayer() throws {
        let home = folder("home"), bin = folder("bin"), dir = folder("voice")
        let wav = dir + "/tone.wav", ogg = dir + "/tone.ogg"
        _ = FileManager.default.createFile(atPath: wav, contents: Self.toneWAV(seconds: 1.2))
        _ = try VoiceNote.encode(wav: wav, to: ogg)
        let model = FakeChatModel()
        model.contact("Sam")
        let voice = model.addAttachment("Sam", .incoming, .voice, name: "voice-message.ogg", size: 10, transfer: .complete(path: ogg))
        let view = makeView(model, options: TUIOptions(timeZone: utc, draftDirectory: home, environment: ["PATH": bin]), open: "Sam")
        view.state.focus = .conversation
        view.state.selected = 0
        XCTAssertEqual(model.items[model.id("Sam")]?.count, 1)
        _ = voice

        // Its length is read off the UI thread: the first frame goes without it.
        XCTAssertTrue(view.frame().contains("Voice message · voice-message.ogg · 10 B"), view.frame().dump)
        XCTAssertTrue(eventually { view.voiceLengths.idle })
        XCTAssertTrue(view.frame().contains("Voice message 0:01 · voice-message.ogg · 10 B"), "its length, read from the file: \(view.frame().dump)")
        view.press(.character("p"))
        XCTAssertEqual(view.state.notice?.text, "No player here: install pipewire (pw-play) or alsa-utils (aplay).")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: home), [], "nothing left behind")

        // Issue 27, finding 8: decoded into a pipe the player reads (`aplay -q -`), nothing
        // written in the home or anywhere else.
        let played = dir + "/played.wav"
        writeScript(bin + "/aplay", "echo \"$@\" > \(dir)/arguments; cat > \(played).tmp; mv \(played).tmp \(played)")
        view.press(.character("p"))
        XCTAssertTrue(view.frame().line(22).contains("Playing the voice message (0:01)."), view.frame().dump)
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: played) }, "the player was started and read to the end")
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: played))
        XCTAssertEqual(Array(bytes.prefix(4)), Array("RIFF".utf8), "a WAV")
        XCTAssertEqual(bytes.count, 44 + 48_000 * 2 * 12 / 10, "its header's length and no more: \(bytes.count)")
        XCTAssertEqual(try String(contentsOfFile: dir + "/arguments", encoding: .utf8), "-q -\n", "read from its standard input")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: home), [], "nothing written in the home")
    }

    /// The stream reads the length from the final granule position before decoding, and
    /// refuses one over the limit without writing a byte (a small file of one-byte packets
    /// decodes to hours: 329 MiB of WAV from 63 KB).
    func testTheStreamRefusesALengthOverTheLimitBeforeWritingAnything() throws {
        XCTAssertEqual(VoiceNote.maximumPlaySeconds, 7_200)
        let dir = folder("limit")
        let wav = dir + "/tone.wav", ogg = dir + "/tone.ogg"
        _ = FileManager.default.createFile(atPath: wav, contents: Self.toneWAV(seconds: 1.2))
        _ = try VoiceNote.encode(wav: wav, to: ogg)
        let refused = Pipe()
        XCTAssertThrowsError(try VoiceNote.stream(ogg: ogg, to: refused.fileHandleForWriting.fileDescriptor, maximumSeconds: 1))
        try refused.fileHandleForWriting.close()
        XCTAssertEqual(refused.fileHandleForReading.readDataToEndOfFile().count, 0, "nothing decoded")
        // A reader that goes away early ends the stream with an error, not a SIGPIPE.
        let early = Pipe()
        try early.fileHandleForReading.close()
        XCTAssertThrowsError(try VoiceNote.stream(ogg: ogg, to: early.fileHandleForWriting.fileDescriptor))
    }

    /// A voice message that does not read is refused before anything is decoded.
    func testAVoiceMessageThatDoesNotReadIsNotPlayed() throws {
        XCTAssertEqual(VoiceNote.maximumPlaySeconds, 7_200)
        let model = FakeChatModel()
        model.contact("Sam")
        let bin = folder("bin"), dir = folder("voice")
        writeScript(bin + "/aplay", "touch \(dir)/started; cat > /dev/null")
        let ogg = dir + "/long.ogg"
        FileManager.default.createFile(atPath: ogg, contents: Data("not opus".utf8))
        model.addAttachment("Sam", .incoming, .voice, name: "long.ogg", size: 8, transfer: .complete(path: ogg))
        let view = makeView(model, options: TUIOptions(timeZone: utc, environment: ["PATH": bin]), open: "Sam")
        view.state.focus = .conversation
        view.state.selected = 0
        _ = view.frame()
        XCTAssertTrue(eventually { view.voiceLengths.idle })
        view.press(.character("p"))
        XCTAssertEqual(view.state.notice?.text, "Cannot play it: it is not a voice message rChat can read.")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/started"), "no player started")
    }

    /// `/voice` through a fake `arecord` that writes a tone and waits for SIGINT.
    func testVoiceRecordsUntilEnterEncodesAndSendsEscCancels() throws {
        let home = folder("home"), bin = folder("bin"), dir = folder("tone")
        let source = dir + "/tone.wav"
        _ = FileManager.default.createFile(atPath: source, contents: Self.toneWAV(seconds: 1.5))
        let model = FakeChatModel()
        model.contact("Sam")
        let options = TUIOptions(timeZone: utc, draftDirectory: home, environment: ["PATH": bin])
        let view = makeView(model, options: options, open: "Sam")

        view.type("/voice")
        view.press(.enter)
        XCTAssertEqual(view.state.notice?.text, "No recorder here: install pipewire (pw-record) or alsa-utils (arecord).")
        XCTAssertNil(view.state.prompt)

        writeScript(bin + "/arecord", "for a; do out=$a; done; cat \(source) > \"$out\"; trap 'exit 0' INT; while :; do sleep 0.05; done")
        view.type("/voice")
        view.press(.enter)
        XCTAssertEqual(view.frame().line(23), "› • Recording… 0:00  Enter sends, Esc cancels")
        XCTAssertEqual(view.pollMilliseconds, 1000, "the elapsed time moves")
        model.clock += 65
        XCTAssertEqual(view.frame().line(23), "› • Recording… 1:05  Enter sends, Esc cancels")
        view.type("x")
        XCTAssertTrue(view.frame().line(22).contains("Recording: Enter sends it, Esc cancels."))
        XCTAssertTrue(view.state.composer.isEmpty, "nothing typed meanwhile")
        // Enter once the recorder has written its file.
        let recording = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: home).first)
        XCTAssertTrue(eventually { (try? FileManager.default.attributesOfItem(atPath: "\(home)/\(recording)/recording.wav")[.size] as? Int) ?? 0 > 1000 })
        view.press(.enter)
        XCTAssertEqual(model.filesSent.count, 1, view.frame().dump)
        XCTAssertEqual(model.filesSent.first?.0, model.id("Sam"))
        XCTAssertEqual(model.filesSent.first?.2, .voice)
        XCTAssertEqual(model.filesSentBytes.first.map { Array($0.prefix(4)) }, Array("OggS".utf8), "Ogg Opus, as it was when sent")
        XCTAssertEqual(model.filesSentModes.first, 0o600)
        XCTAssertTrue(view.frame().line(22).contains("Sending a voice message (0:02)") || view.frame().line(22).contains("Sending a voice message (0:01)"),
                      view.frame().dump)
        XCTAssertEqual(view.state.notice?.lasts, model.filesSentIDs.first.map(Notice.Lasts.sending), "until it left Sending")
        view.handle([.statusChanged(conversation: model.id("Sam"), id: model.filesSentIDs[0], status: .sent)])
        XCTAssertNil(view.state.notice, "sent: the line goes")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: home), [], "its files are gone")
        XCTAssertEqual(view.frame().line(23), "› Message Sam")

        view.type("/voice")
        view.press(.enter)
        XCTAssertNotNil(view.state.prompt)
        view.press(.escape)
        XCTAssertTrue(view.frame().line(22).contains("Recording cancelled: nothing was sent."))
        XCTAssertEqual(model.filesSent.count, 1)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: home), [])
    }
}

/// The terminal's pixels as the previews use them: sixel only with a known cell, pictures
/// never on the last row, and 24-bit colour from terminfo too.
final class PreviewPixelsTests: XCTestCase {
    func testSixelOnlyWhereTheCellIsKnownKittyAlways() {
        let cell = CellPixels(width: 9, height: 17)
        XCTAssertEqual(PreviewStyle.mode(environment: ["RCHAT_GRAPHICS": "sixel"], rows: 24, columns: 80, unicode: true, cell: cell), .sixel)
        XCTAssertEqual(PreviewStyle.mode(environment: ["RCHAT_GRAPHICS": "sixel"], rows: 24, columns: 80, unicode: true, cell: nil),
                       .symbols(colors: .ansi16), "a sixel picture of a guessed size could cover the rows below")
        XCTAssertEqual(PreviewStyle.mode(environment: ["TERM": "xterm-kitty"], rows: 24, columns: 80, unicode: true, cell: nil), .kitty,
                       "kitty places a picture over the cells it is told")
        XCTAssertNil(PreviewStyle.mode(environment: ["RCHAT_GRAPHICS": "sixel"], rows: 24, columns: 80, unicode: false, cell: nil))
    }

    func testWhoIsAskedForPixels() {
        XCTAssertTrue(PreviewStyle.drawsPixels(["RCHAT_GRAPHICS": "sixel"]))
        XCTAssertTrue(PreviewStyle.drawsPixels(["RCHAT_GRAPHICS": "KITTY"]))
        XCTAssertTrue(PreviewStyle.drawsPixels(["TERM": "xterm-kitty"]))
        XCTAssertTrue(PreviewStyle.drawsPixels(["TERM": "xterm-256color", "KITTY_WINDOW_ID": "1"]))
        XCTAssertFalse(PreviewStyle.drawsPixels(["TERM": "xterm-kitty", "RCHAT_GRAPHICS": "symbols"]))
        XCTAssertFalse(PreviewStyle.drawsPixels(["TERM": "xterm-256color"]), "no question a terminal without pictures would have to answer")
        XCTAssertFalse(PreviewStyle.drawsPixels([:]))
    }

    func testTrueColourFromColortermOrTerminfo() {
        let cases: [([String: String], Bool, ColorDepth)] = [
            (["COLORTERM": "truecolor"], false, .trueColor),
            (["COLORTERM": "24BIT"], false, .trueColor),
            (["COLORTERM": "yes", "TERM": "xterm-256color"], false, .ansi256),
            (["TERM": "xterm-256color"], true, .trueColor),
            (["TERM": "xterm"], true, .trueColor),
            (["TERM": "xterm"], false, .ansi16),
            (["TERM": "xterm-256color"], false, .ansi256),
            (["TERM": "xterm-kitty"], false, .trueColor),
            (["TERM": "xterm", "NO_COLOR": "1", "COLORTERM": "truecolor"], true, .none),
            (["NO_COLOR": ""], false, .ansi16),
        ]
        for (environment, terminfo, depth) in cases {
            XCTAssertEqual(PreviewStyle.colorDepth(environment, terminfoTrueColor: terminfo), depth, "\(environment) terminfo \(terminfo)")
            XCTAssertEqual(PreviewStyle.mode(environment: environment, rows: 24, columns: 20, unicode: true, terminfoTrueColor: terminfo),
                           .symbols(colors: depth), "symbols (too narrow for pictures) in those colours")
        }
    }

    func testNoPictureOnTheLastRow() {
        func image(_ row: Int, _ rows: Int) -> ScreenImage {
            ScreenImage(row: row, column: 3, rows: rows, columns: 10, kind: .sixel, key: "k\(row)", escape: "x")
        }
        let drawn = ImageWrites.drawable([image(1, 8), image(20, 9), image(21, 9), image(0, 29), image(0, 30), image(-1, 3), image(5, 0)],
                                         screenRows: 30)
        XCTAssertEqual(drawn, [image(1, 8), image(20, 9), image(0, 29)], "the bottom one row above the last at the lowest")
    }

    func testAPreviewIsRenderedForTheTerminalsCell() {
        let id = MessageID.random()
        XCTAssertNotEqual(PhotoPreviews.key(id, columns: 40, rows: 8, mode: .sixel, cell: CellPixels(width: 12, height: 24)),
                          PhotoPreviews.key(id, columns: 40, rows: 8, mode: .sixel, cell: CellPixels(width: 7, height: 14)),
                          "another font size: drawn again")
    }
}

/// Issue 27, finding 7: a voice message whose file takes long to walk (50 MiB of empty Ogg
/// pages froze the view 4.3 s at every opening) never holds up a frame: lengths are read off
/// the UI thread, once, and a file larger than any voice message is not read at all.
final class VoiceLengthTests: XCTestCase {
    func testAHugeVoiceFileNeverHoldsUpAFrameAndIsNotRead() throws {
        let dir = temporaryFolder("voice-length")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // One empty Ogg page (header only, no segments) repeated past the bound: what the
        // attack sent, as far as size goes.
        var page: [UInt8] = Array("OggS".utf8) + [0, 0] + [UInt8](repeating: 0, count: 8) + [1, 0, 0, 0] + [0, 0, 0, 0] + [0, 0, 0, 0] + [0]
        page.reserveCapacity(page.count)
        let pages = Int(VoiceLengths.maximumBytes) / page.count + 2
        let path = dir + "/huge.ogg"
        FileManager.default.createFile(atPath: path, contents: Data(Array(repeating: page, count: pages).joined()))
        let model = FakeChatModel()
        model.contact("Sam")
        model.addAttachment("Sam", .incoming, .voice, name: "huge.ogg", size: 10, transfer: .complete(path: path))
        let view = makeView(model, open: "Sam")
        let started = Date()
        let first = view.frame()
        XCTAssertLessThan(Date().timeIntervalSince(started), 1, "the first frame does not wait for the file")
        XCTAssertTrue(first.contains("Voice message · huge.ogg"), first.dump)
        XCTAssertTrue(eventually { view.voiceLengths.idle })
        XCTAssertEqual(VoiceLengths.read(path), .unreadable, "larger than any voice message: not read")
        XCTAssertFalse(view.frame().contains("0:"), "no length for it")
    }
}
