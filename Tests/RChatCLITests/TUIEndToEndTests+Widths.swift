import Foundation
import RChatCore
import RChatTUI
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
    /// The list's border and Sending's glyph, as the view draws them.
    static let border = Character(Glyphs.unicode.vertical), sending = Character(Glyphs.unicode.status(.sending).text)

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
        try screen("alice", "every sample on screen") { $0.contains(last) && $0.contains("漢 end") }
        var shown = try checkWidths(samplesShown: true)
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
        try screen("alice", "the samples scrolled away") { s in
            s.contains("filler 27") && !s.contains("m00 [") && !s.contains("x漢") && !s.contains(last)
        }
        shown = try checkWidths(samplesShown: false)
        // (The name in the header and the list holds some of them: only the conversation.)
        let pane = shown.screenLines.compactMap { line in line.firstIndex(of: Self.border).map { line[$0...] } }.joined(separator: "\n")
        for sample in Self.widthSamples where sample.shown != "\u{FFFD}" {
            XCTAssertFalse(pane.contains(sample.shown), "\(sample.text) left over:\n\(shown)")
        }
        // And back, drawn over the filler lines.
        try screens.keys(session("alice"), "Tab")
        try screens.keys(session("alice"), "PPage")
        try screens.keys(session("alice"), "PPage")
        try screen("alice", "the samples again") { $0.contains("m00 [") && $0.contains(last) }
        try checkWidths(samplesShown: true)
        // A whole redraw (a resize: the same path as Ctrl-L, and one the screen shows was
        // done) draws them the same.
        try screens.resize(session("alice"), columns: 100, rows: 31)
        try screen("alice", "laid out for 31 rows") { $0.screenLines.count > 30 && $0.screenLines[30].hasPrefix("›") }
        try screens.resize(session("alice"), columns: 100, rows: 30)
        try screen("alice", "laid out for 30 rows again") { s in
            s.screenLines[29].hasPrefix("›") && s.contains("m00 [") && s.contains(last)
        }
        try checkWidths(samplesShown: true)
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "quit cleanly") { $0.contains("[exited 0]") }
    }

    /// Checks, in tmux's own grid, the columns of what follows each sample: the list's
    /// border, the status glyphs, and the brackets around each sample. A capture and the
    /// reading of tmux's grid after it are not one instant (a frame may be half written):
    /// checked again until they agree and hold, or the deadline; returns that capture.
    @discardableResult
    private func checkWidths(samplesShown: Bool, seconds: Double = 10) throws -> String {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while true {
            let shown = try screens.capture(session("alice"))
            let problems = try widthProblems(shown, samplesShown: samplesShown)
            if problems.isEmpty { return shown }
            if Date() >= deadline {
                XCTFail(problems.joined(separator: "\n") + "\n" + shown)
                return shown
            }
            waitUntilDeadline(min(deadline, Date(timeIntervalSinceNow: 0.05)))
        }
    }

    private func widthProblems(_ shown: String, samplesShown: Bool) throws -> [String] {
        let rows = shown.screenLines
        var problems: [String] = []
        var textColumn: Int?
        for (r, row) in rows.enumerated() where (1...27).contains(r) {
            let sample = Self.widthSamples.indices.first { row.contains(String(format: "m%02d [", $0)) }
            var marks: [Character] = [Self.border]
            if sample != nil { marks += ["[", "]"] }
            if row.contains(Self.sending) { marks.append(Self.sending) }
            let at = try screens.columns(session("alice"), row: r, of: marks)
            if at[0] != Self.borderColumn { problems.append("row \(r): the border is at \(at[0] ?? -1): \(row)") }
            if row.contains(Self.sending), at.last! != Self.glyphColumn {
                problems.append("row \(r): the status glyph is at \(at.last! ?? -1): \(row)")
            }
            guard let i = sample else { continue }
            let s = Self.widthSamples[i]
            if !row.contains(String(format: "m%02d [", i) + s.shown + "]") { problems.append("\(s.text) not shown whole as \(s.shown): \(row)") }
            guard let open = at[1], let close = at[2] else { problems.append("\(s.text): no brackets found: \(row)"); continue }
            textColumn = textColumn ?? open
            if open != textColumn { problems.append("\(s.text): the text starts at \(open), not \(textColumn!): \(row)") }
            if close - open - 1 != TextWidth.columns(of: s.text) {
                problems.append("\(s.text): drawn \(close - open - 1) columns wide, not \(TextWidth.columns(of: s.text)): \(row)")
            }
        }
        if samplesShown && textColumn == nil { problems.append("no sample on screen") }
        return problems
    }
}
