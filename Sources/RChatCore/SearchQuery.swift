/// What the user typed to search for, taken as words — never as a query language: quotes,
/// `*`, `-`, `NEAR`, `AND`, parentheses and the like are only characters. A message matches
/// when every word begins a word of its text (case and accents ignored by the index).
///
/// Words are split at whitespace and at control and format characters (a NUL, an escape, a
/// direction override cannot reach the index's query parser). A word with no letter or digit
/// in it matches nothing anywhere, so it is left out rather than making the whole search
/// find nothing; a query left with no word is refused (`SearchQueryError.noWords`).
public struct SearchQuery: Equatable, Sendable, CustomStringConvertible {
    /// At most this many words; more is refused, not cut.
    public static let maximumWords = 16
    /// Results are bounded: the newest this many.
    public static let resultLimit = 200

    public let words: [String]

    public init(_ text: String) throws(SearchQueryError) {
        var words: [String] = []
        var current = String.UnicodeScalarView()
        func endWord() {
            if current.contains(where: Self.isLetterOrDigit) { words.append(String(current)) }
            current = String.UnicodeScalarView()
        }
        for scalar in text.unicodeScalars {
            if Self.separates(scalar) { endWord() } else { current.append(scalar) }
        }
        endWord()
        guard !words.isEmpty else { throw .noWords }
        guard words.count <= Self.maximumWords else { throw .tooManyWords(words.count) }
        self.words = words
    }

    /// The words joined by spaces (what was searched for, as the user sees it).
    public var description: String { words.joined(separator: " ") }

    static func separates(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isWhitespace { return true }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator: return true
        default: return false
        }
    }

    /// What the index counts as part of a word (SQLite's unicode61 tokenizer: letters,
    /// digits, private-use characters).
    static func isLetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .privateUse:
            return true
        default:
            return false
        }
    }
}

/// Why a search was refused: one line saying what to type instead.
public enum SearchQueryError: Error, Equatable, Sendable, CustomStringConvertible {
    case noWords
    case tooManyWords(Int)

    public var description: String {
        switch self {
        case .noWords: return "nothing to search for: give one or more words (with letters or digits)"
        case .tooManyWords(let n): return "\(n) words to search for: give at most \(SearchQuery.maximumWords)"
        }
    }
}
