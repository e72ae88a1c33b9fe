import Foundation
import RChatCore
import XCTest

extension TUIEndToEndTests {
    /// Samples of every kind of cluster, as sent in a message, and as tmux shows them (the
    /// form every terminal draws at the C library's width: no selectors, no joiners between
    /// pictures).
    static let widthSamples: [(text: String, shown: String)] = [
        ("漢字", "漢字"), ("한", "한"), ("\u{1112}\u{1161}\u{11AB}", "\u{1112}\u{1161}\u{11AB}"),
        ("😀︎", "😀"), ("❤️", "❤"), ("👍🏽", "👍🏽"), ("👨‍👩‍👧", "👨👩👧"), ("🇫🇷", "🇫🇷"), ("🇫", "\u{FFFD}"),
        ("1️⃣", "1\u{20E3}"), ("z" + String(repeating: "\u{301}", count: 6), "z" + String(repeating: "\u{301}", count: 6)),
        ("नमस्ते", "नमस्ते"), ("क्षि", "क्षि"), ("ไทย", "ไทย"), ("\u{0E01}\u{0E33}", "\u{0E01}\u{0E33}"),
        ("a\u{200B}b", "a\u{FFFD}b"),
    ]

    /// The panes' fixed columns at 100×30: the list's border, and the status glyph of an
    /// outgoing message.
    static let borderColumn = 25, glyphColumn = 98

    /// Messages and a contact name with wide, joined and combining characters, on a real
    /// tmux screen: every row is exactly 100 columns as the C library counts tmux's cells
    /// (no cell drawn at another width than ncurses placed it), the border and the status
    /// glyphs after each sample are at their columns, the marks are all there (six on one
    /// base, more than an ncurses cell holds), a character that does not fit at the end of
    /// a line starts the next, and nothing is left over once the samples scroll away and
    /// come back, or after a whole redraw.
    func testWideTextLinesUpOnTheTmuxScreen() throws {
        try world.makePair("alice", "sam")
        world.stopRelay()
        let name = "山田👨‍👩‍👧❤️é"
        try world.expectSuccess(world.box.rchat("alice", ["rename", "Sam", name]))
        for (i, sample) in Self.widthSamples.enumerated() {
            try world.send("alice", to: name, String(format: "m%02d [", i) + sample.text + "]")
        }
        // The message text is 51 columns wide here: 50 x, then 漢 moves to the next line.
        try world.send("alice", to: name, String(repeating: "x", count: 50) + "漢 end")
        try openView("alice")
        try screens.keys(session("alice"), "Enter")
        let last = String(format: "m%02d [", Self.widthSamples.count - 1)
        var shown = try screen("alice", "every sample on screen") { $0.contains(last) && $0.contains("漢 end") }
        try checkWidths(shown, samplesShown: true)
        let lines = shown.screenLines
        let xs = try XCTUnwrap(lines.firstIndex { $0.contains(String(repeating: "x", count: 50)) }, shown)
        XCTAssertFalse(lines[xs].contains("x漢"), "no half of 漢 at the end of the line:\n\(shown)")
        XCTAssertTrue(lines[xs + 1].contains("漢 end"), shown)
        XCTAssertTrue(shown.contains("山田👨👩👧❤é"), "the name in the header and the list:\n\(shown)")

        // The composer's cursor after a wide, joined and combined text.
        try screens.keys(session("alice"), "漢👨‍👩‍👧é", literal: true)
        try screen("alice", "the draft") { $0.contains("› 漢👨👩👧é") }
        let cursor = try screens.tmux(["display-message", "-p", "-t", session("alice"), "#{cursor_x}"]).stdout
        XCTAssertEqual(cursor.trimmingCharacters(in: .whitespacesAndNewlines), String(2 + 2 + 6 + 1))
        try screens.keys(session("alice"), "C-u")

        // Enough messages to scroll every sample away: nothing of them is left.
        for i in 0..<28 { try screens.type(session("alice"), "filler \(i)") }
        shown = try screen("alice", "the samples scrolled away") { s in
            s.contains("filler 27") && !s.contains("m00 [") && !s.contains("x漢") && !s.contains(last)
        }
        try checkWidths(shown, samplesShown: false)
        // (The name in the header and the list holds some of them: only the conversation.)
        let pane = shown.screenLines.compactMap { line in line.firstIndex(of: "│").map { line[$0...] } }.joined(separator: "\n")
        for sample in Self.widthSamples where sample.shown != "\u{FFFD}" {
            XCTAssertFalse(pane.contains(sample.shown), "\(sample.text) left over:\n\(shown)")
        }
        // And back, drawn over the filler lines.
        try screens.keys(session("alice"), "Tab")
        try screens.keys(session("alice"), "PPage")
        try screens.keys(session("alice"), "PPage")
        shown = try screen("alice", "the samples again") { $0.contains("m00 [") && $0.contains(last) }
        try checkWidths(shown, samplesShown: true)
        // A whole redraw (Ctrl-L) draws them the same.
        try screens.keys(session("alice"), "C-l")
        shown = try screen("alice", "the samples after Ctrl-L") { $0.contains("m00 [") && $0.contains(last) }
        try checkWidths(shown, samplesShown: true)
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "quit cleanly") { $0.contains("[exited 0]") }
    }

    /// Checks, in tmux's own grid, the columns of what follows each sample: the list's
    /// border, the status glyphs, and the brackets around each sample.
    private func checkWidths(_ shown: String, samplesShown: Bool) throws {
        let rows = shown.screenLines
        var textColumn: Int?
        for (r, row) in rows.enumerated() where (1...27).contains(r) {
            let sample = Self.widthSamples.indices.first { row.contains(String(format: "m%02d [", $0)) }
            var marks: [Character] = ["│"]
            if sample != nil { marks += ["[", "]"] }
            if row.contains("◷") { marks.append("◷") }
            let at = try screens.columns(session("alice"), row: r, of: marks)
            XCTAssertEqual(at[0], Self.borderColumn, "row \(r): the border moved: \(row)\n\(shown)")
            if row.contains("◷") {
                XCTAssertEqual(at.last!, Self.glyphColumn, "row \(r): the status glyph moved: \(row)\n\(shown)")
            }
            guard let i = sample else { continue }
            let s = Self.widthSamples[i]
            XCTAssertTrue(row.contains(String(format: "m%02d [", i) + s.shown + "]"), "\(s.text) not shown whole as \(s.shown): \(row)")
            guard let open = at[1], let close = at[2] else { XCTFail("\(s.text): no brackets found: \(row)"); continue }
            textColumn = textColumn ?? open
            XCTAssertEqual(open, textColumn, "\(s.text): the text column moved: \(row)")
            XCTAssertEqual(close - open - 1, TextWidth.columns(of: s.text), "\(s.text): not drawn at its width: \(row)")
        }
        if samplesShown { XCTAssertNotNil(textColumn, shown) }
    }
}
