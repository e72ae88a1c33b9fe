import RChatCore

/// The line being written, with readline-style editing and a history of sent lines.
/// Positions count graphemes, so a cursor never lands inside an emoji or a combined letter.
public struct Composer: Equatable, Sendable {
    public private(set) var characters: [Character] = []
    public private(set) var cursor = 0
    public private(set) var history: [String] = []
    /// Which history entry is shown (nil: the user's own draft).
    private var historyIndex: Int?
    private var draft: [Character] = []

    public static let historyLimit = 100

    public init() {}

    public var text: String { String(characters) }
    public var isEmpty: Bool { characters.isEmpty }

    public enum Edit: Equatable, Sendable {
        case insert(Character)
        case left, right, start, end
        case backspace, delete
        case deleteWordBackward, deleteToStart, deleteToEnd
        /// Everything typed goes, as Ctrl-C does in a shell.
        case clear
        case historyPrevious, historyNext
    }

    public mutating func apply(_ edit: Edit) {
        switch edit {
        case .insert(let c):
            // A combining mark typed after a letter joins it, as it does on screen.
            if cursor > 0, case let joined = String(characters[cursor - 1]) + String(c), joined.count == 1 {
                characters[cursor - 1] = Character(joined)
            } else {
                characters.insert(c, at: cursor); cursor += 1
            }
        case .left: cursor = max(0, cursor - 1)
        case .right: cursor = min(characters.count, cursor + 1)
        case .start: cursor = 0
        case .end: cursor = characters.count
        case .backspace:
            guard cursor > 0 else { return }
            characters.remove(at: cursor - 1); cursor -= 1
        case .delete:
            guard cursor < characters.count else { return }
            characters.remove(at: cursor)
        case .deleteWordBackward:
            // Like readline's Ctrl-W: the spaces before the cursor, then the word before them.
            var i = cursor
            while i > 0, characters[i - 1].isWhitespace { i -= 1 }
            while i > 0, !characters[i - 1].isWhitespace { i -= 1 }
            characters.removeSubrange(i..<cursor); cursor = i
        case .deleteToStart:
            characters.removeSubrange(0..<cursor); cursor = 0
        case .deleteToEnd:
            characters.removeSubrange(cursor...)
        case .clear:
            characters = []; cursor = 0; historyIndex = nil
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

    private mutating func show(_ line: String, index: Int) {
        historyIndex = index
        characters = Array(line); cursor = characters.count
    }

    /// Takes the line out to send it, remembering it for Up.
    public mutating func take() -> String {
        let line = text
        if !line.isEmpty, history.last != line {
            history.append(line)
            if history.count > Self.historyLimit { history.removeFirst() }
        }
        characters = []; cursor = 0; historyIndex = nil; draft = []
        return line
    }

    /// Puts a line back (a send that failed keeps what the user wrote).
    public mutating func restore(_ line: String) {
        characters = Array(line); cursor = characters.count; historyIndex = nil
    }

    /// What is typed and where the cursor is, as a conversation keeps it (nil: nothing typed).
    public var kept: Draft? { Draft(text: text, cursor: cursor) }

    /// Shows a conversation's draft (nil: an empty line); the history of sent lines stays.
    public mutating func show(_ kept: Draft?) {
        characters = kept.map { Array($0.text) } ?? []
        cursor = min(kept?.cursor ?? 0, characters.count)
        historyIndex = nil
        draft = []
    }

    /// Columns from the start of the line to the cursor.
    public var cursorColumn: Int { TextWidth.columns(of: String(characters[..<cursor])) }
}
