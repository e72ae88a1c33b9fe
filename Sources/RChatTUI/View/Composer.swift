import RChatCore

/// The message being written, with readline-style editing, a kill buffer, a history of sent
/// messages and a reverse history search. A draft may span several lines ("\n" inside).
/// Positions count graphemes, so a cursor never lands inside an emoji or a combined letter.
public struct Composer: Equatable, Sendable {
    public private(set) var characters: [Character] = []
    public private(set) var cursor = 0
    public private(set) var history: [String] = []
    /// Which history entry is shown (nil: the user's own draft).
    private var historyIndex: Int?
    private var draft: [Character] = []
    /// What the last kill (Ctrl-W, Ctrl-U, Ctrl-K, Alt-D, Alt-Backspace) removed: Ctrl-Y puts it back.
    public private(set) var killed = ""
    public private(set) var mode: Mode = .editing

    public static let historyLimit = 100

    /// What the keys do right now.
    public enum Mode: Equatable, Sendable {
        case editing
        /// Ctrl-X was pressed: the next key completes a two-key command (Ctrl-X Ctrl-E).
        case afterCtrlX
        /// Ctrl-R: an incremental search through the history.
        case searching(HistorySearch)
    }

    public init() {}

    public var text: String { String(characters) }
    public var isEmpty: Bool { characters.isEmpty }

    public enum Edit: Equatable, Sendable {
        /// A character; "\n" starts a new line in the same message.
        case insert(Character)
        case left, right
        /// Start / end of the cursor's line.
        case start, end
        /// A line up or down in a draft of several lines; from the first (last) line, the
        /// previous (next) history entry.
        case lineUp, lineDown
        /// A word left or right (a word is a run of letters and digits, as in readline).
        case wordLeft, wordRight
        case backspace, delete
        /// Ctrl-W: the spaces before the cursor, then the non-spaces before them.
        case deleteWordBackward
        /// Alt-Backspace: back to the start of the word before the cursor.
        case deleteAlphanumericWordBackward
        /// Alt-D: forward to the end of the word after the cursor.
        case deleteWordForward
        /// To the start / end of the cursor's line; at the end of a line Ctrl-K joins the next.
        case deleteToStart, deleteToEnd
        /// Ctrl-Y: inserts what the last kill removed.
        case yank
        /// Everything typed goes, as Ctrl-C does in a shell.
        case clear
        case historyPrevious, historyNext
    }

    public mutating func apply(_ edit: Edit) {
        switch edit {
        case .insert(let c):
            insert(c)
        case .left: cursor = max(0, cursor - 1)
        case .right: cursor = min(characters.count, cursor + 1)
        case .start: cursor = lineStart(cursor)
        case .end: cursor = lineEnd(cursor)
        case .lineUp:
            let start = lineStart(cursor)
            guard start > 0 else { return apply(.historyPrevious) }
            cursor = position(inLineStartingAt: lineStart(start - 1), column: columns(lineStart(cursor)..<cursor))
        case .lineDown:
            let end = lineEnd(cursor)
            guard end < characters.count else { return apply(.historyNext) }
            cursor = position(inLineStartingAt: end + 1, column: columns(lineStart(cursor)..<cursor))
        case .wordLeft: cursor = wordStart(before: cursor)
        case .wordRight: cursor = wordEnd(after: cursor)
        case .backspace:
            guard cursor > 0 else { return }
            characters.remove(at: cursor - 1); cursor -= 1
        case .delete:
            guard cursor < characters.count else { return }
            characters.remove(at: cursor)
        case .deleteWordBackward:
            var i = cursor
            while i > 0, characters[i - 1].isWhitespace { i -= 1 }
            while i > 0, !characters[i - 1].isWhitespace { i -= 1 }
            kill(i..<cursor)
        case .deleteAlphanumericWordBackward: kill(wordStart(before: cursor)..<cursor)
        case .deleteWordForward: kill(cursor..<wordEnd(after: cursor))
        case .deleteToStart:
            kill(lineStart(cursor)..<cursor)
        case .deleteToEnd:
            let end = lineEnd(cursor)
            kill(cursor..<(end == cursor ? min(characters.count, end + 1) : end))
        case .yank:
            for c in killed { insert(c) }
        case .clear:
            characters = []; cursor = 0; historyIndex = nil; mode = .editing
        case .historyPrevious:
            guard !history.isEmpty else { return }
            if historyIndex == nil { draft = characters }
            let i = max(0, (historyIndex ?? history.count) - 1)
            show(history[i], index: i)
        case .historyNext:
            guard let i = historyIndex else { return }
            if i + 1 < history.count {
                show(history[i + 1], index: i + 1)
            } else {
                historyIndex = nil
                characters = draft; cursor = characters.count
            }
        }
    }

    private mutating func insert(_ c: Character) {
        // A combining mark typed after a letter joins it, as it does on screen.
        if cursor > 0, case let joined = String(characters[cursor - 1]) + String(c), joined.count == 1 {
            characters[cursor - 1] = Character(joined)
        } else {
            characters.insert(c, at: cursor); cursor += 1
        }
    }

    /// Removes a range (the cursor goes to its start) and keeps it for Ctrl-Y; an empty
    /// range leaves the kill buffer as it was.
    private mutating func kill(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        killed = String(characters[range])
        characters.removeSubrange(range)
        cursor = range.lowerBound
    }

    private func lineStart(_ i: Int) -> Int {
        var i = i
        while i > 0, characters[i - 1] != "\n" { i -= 1 }
        return i
    }

    private func lineEnd(_ i: Int) -> Int {
        var i = i
        while i < characters.count, characters[i] != "\n" { i += 1 }
        return i
    }

    private func columns(_ range: Range<Int>) -> Int { TextWidth.columns(of: String(characters[range])) }

    /// The position in the line starting at `start` closest to `column` without passing it.
    private func position(inLineStartingAt start: Int, column: Int) -> Int {
        var i = start
        var used = 0
        while i < characters.count, characters[i] != "\n" {
            let w = TextWidth.displayed(characters[i], asciiOnly: false).1
            if used + w > column { break }
            used += w; i += 1
        }
        return i
    }

    private static func isWordCharacter(_ c: Character) -> Bool { c.isLetter || c.isNumber }

    private func wordStart(before i: Int) -> Int {
        var i = i
        while i > 0, !Self.isWordCharacter(characters[i - 1]) { i -= 1 }
        while i > 0, Self.isWordCharacter(characters[i - 1]) { i -= 1 }
        return i
    }

    private func wordEnd(after i: Int) -> Int {
        var i = i
        while i < characters.count, !Self.isWordCharacter(characters[i]) { i += 1 }
        while i < characters.count, Self.isWordCharacter(characters[i]) { i += 1 }
        return i
    }

    private mutating func show(_ line: String, index: Int) {
        historyIndex = index
        characters = Array(line); cursor = characters.count
    }

    /// Takes the message out to send it, remembering it for Up.
    public mutating func take() -> String {
        let line = text
        if !line.isEmpty, history.last != line {
            history.append(line)
            if history.count > Self.historyLimit { history.removeFirst() }
        }
        characters = []; cursor = 0; historyIndex = nil; draft = []; mode = .editing
        return line
    }

    /// Puts a message back (a send that failed keeps what the user wrote; an editor's text).
    public mutating func restore(_ line: String) {
        characters = Array(line); cursor = characters.count; historyIndex = nil; mode = .editing
    }

    /// What is typed and where the cursor is, as a conversation keeps it (nil: nothing typed).
    public var kept: Draft? { Draft(text: text, cursor: cursor) }

    /// Shows a conversation's draft (nil: an empty line); the history of sent lines stays.
    public mutating func show(_ kept: Draft?) {
        characters = kept.map { Array($0.text) } ?? []
        cursor = min(kept?.cursor ?? 0, characters.count)
        historyIndex = nil
        draft = []
        mode = .editing
    }

    /// Columns from the start of the cursor's line to the cursor.
    public var cursorColumn: Int { columns(lineStart(cursor)..<cursor) }

    // MARK: Two-key commands

    /// Ctrl-X: waits for the key that completes the command.
    public mutating func beginCtrlX() { mode = .afterCtrlX }

    /// Back to plain editing after the second key of a two-key command.
    public mutating func endCtrlX() { if mode == .afterCtrlX { mode = .editing } }

    // MARK: Reverse history search

    /// One key of a Ctrl-R search.
    public enum SearchStep: Equatable, Sendable {
        /// Ctrl-R: start a search, or, in one, the next older match.
        case older
        case type(Character)
        case backspace
        /// Enter: the match becomes the draft (not sent).
        case accept
        /// Esc, Ctrl-G: the draft as it was before the search.
        case cancel
    }

    public mutating func search(_ step: SearchStep) {
        guard case .searching(var s) = mode else {
            if step == .older {
                mode = .searching(HistorySearch(draft: characters, cursor: cursor))
            }
            return
        }
        switch step {
        case .older:
            refind(&s, from: s.match?.entry ?? history.count)
        case .type(let c):
            s.query.append(c)
            refind(&s, from: s.match.map { $0.entry + 1 } ?? history.count)
        case .backspace:
            guard !s.query.isEmpty else { break }
            s.query.removeLast()
            s.match = nil
            refind(&s, from: history.count)
        case .accept:
            if let match = s.match {
                characters = Array(history[match.entry]); cursor = match.offset
            }
            historyIndex = nil
            mode = .editing
            return
        case .cancel:
            characters = s.draft; cursor = s.cursor
            mode = .editing
            return
        }
        mode = .searching(s)
    }

    /// The newest match before `end`; with nothing to find, the last match stays and the
    /// search is marked failing.
    private func refind(_ s: inout HistorySearch, from end: Int) {
        guard !s.query.isEmpty else { s.failing = false; return }
        if let found = findOlder(query: s.query, before: end) {
            s.match = found; s.failing = false
        } else {
            s.failing = true
        }
    }

    private static func folded(_ c: Character) -> Character {
        let lower = c.lowercased()
        return lower.count == 1 ? Character(lower) : c
    }

    /// The newest entry before `end` that contains `query` (case-insensitive), with the
    /// position of the last occurrence in it.
    private func findOlder(query: String, before end: Int) -> HistorySearch.Match? {
        var i = min(end, history.count) - 1
        while i >= 0 {
            let entry = Array(history[i])
            let needle = Array(query).map(Self.folded)
            let hay = entry.map(Self.folded)
            if hay.count >= needle.count {
                for start in stride(from: hay.count - needle.count, through: 0, by: -1)
                where Array(hay[start..<(start + needle.count)]) == needle {
                    return HistorySearch.Match(entry: i, offset: start)
                }
            }
            i -= 1
        }
        return nil
    }
}

/// A Ctrl-R search in progress: what is typed, the entry found, and the draft to go back to.
public struct HistorySearch: Equatable, Sendable {
    public struct Match: Equatable, Sendable {
        /// Index in `Composer.history`.
        public var entry: Int
        /// Where the query starts in it (the cursor after accepting).
        public var offset: Int
    }
    public var query = ""
    public var match: Match?
    /// The query matches nothing older (bash's "failing reverse-i-search").
    public var failing = false
    var draft: [Character]
    var cursor: Int

    init(draft: [Character], cursor: Int) {
        self.draft = draft; self.cursor = cursor
    }
}
