/// A refused command line: one line saying what is wrong and what to do.
public struct UsageError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// The words of a command line once parsed against declared options: the positionals in
/// order, and the options given (the last one wins when an option is repeated).
public struct ParsedArguments: Sendable {
    public private(set) var positionals: [String] = []
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    public init() {}

    /// The text given for `name` (its canonical `--name`), nil when absent.
    public func value(_ name: String) -> String? { values[name] }
    /// Whether the flag `name` (its canonical `--name`) was given.
    public func has(_ name: String) -> Bool { flags.contains(name) }
    public func has(_ option: Option) -> Bool { flags.contains(option.name) }

    /// The typed value: what was given, or the declared default.
    public subscript<Value>(_ declared: Declared<Value>) -> Value {
        values[declared.option.name].map(declared.value(of:)) ?? declared.defaultValue
    }

    /// The positional at `index`, or "missing WHAT".
    public func positional(_ index: Int, _ what: String) throws(UsageError) -> String {
        guard index < positionals.count else { throw UsageError(description: "missing \(what)") }
        return positionals[index]
    }

    /// Refuses a positional beyond the first `max`.
    public func expectPositionals(max: Int) throws(UsageError) {
        if positionals.count > max { throw UsageError(description: "unexpected argument \"\(positionals[max])\"") }
    }

    /// `other` laid over this one: its options win, its positionals follow.
    public func merging(_ other: ParsedArguments) -> ParsedArguments {
        var merged = self
        merged.positionals += other.positionals
        merged.values.merge(other.values) { _, new in new }
        merged.flags.formUnion(other.flags)
        return merged
    }

    fileprivate mutating func set(_ name: String, _ value: String) { values[name] = value }
    fileprivate mutating func set(_ name: String) { flags.insert(name) }
    fileprivate mutating func append(_ positional: String) { positionals.append(positional) }
}

/// Parses words against declared options: `--name VALUE`, `--name=VALUE`, bare flags, and
/// positionals in any order among them; `--` makes every later word a positional, and `-`
/// alone is a positional. An unknown option, a missing value or a value of the wrong type
/// is a `UsageError`, never a silent default: a typo would otherwise do something else
/// than asked.
public struct OptionParser: Sendable {
    public let options: [Option]
    /// Where an unknown option sends the reader: "rchat-relay --help".
    public let helpHint: String
    private let byName: [String: Option]

    public init(_ options: [Option], helpHint: String) {
        self.options = options
        self.helpHint = helpHint
        var byName: [String: Option] = [:]
        for option in options {
            for name in [option.name] + option.aliases {
                precondition(byName[name] == nil, "option \(name) declared twice")
                byName[name] = option
            }
        }
        self.byName = byName
    }

    /// Parses `words` to the end, or (`stopAtPositional`) up to the first positional: the
    /// rest, from that word on, is returned untouched (a command word and what follows it).
    public func parse(_ words: ArraySlice<String>, stopAtPositional: Bool = false) throws(UsageError)
        -> (arguments: ParsedArguments, rest: ArraySlice<String>) {
        var parsed = ParsedArguments()
        var i = words.startIndex
        var onlyPositionals = false
        while i < words.endIndex {
            let word = words[i]
            if onlyPositionals || !word.hasPrefix("-") || word == "-" {
                if stopAtPositional { return (parsed, words[i...]) }
                parsed.append(word)
                i += 1
                continue
            }
            i += 1
            if word == "--" {
                if stopAtPositional { return (parsed, words[i...]) }
                onlyPositionals = true
                continue
            }
            var name = word, inline: String?
            if word.hasPrefix("--"), let eq = word.firstIndex(of: "=") {
                name = String(word[..<eq])
                inline = String(word[word.index(after: eq)...])
            }
            guard let option = byName[name] else {
                throw UsageError(description: "unknown option \"\(word)\" (see \(helpHint))")
            }
            switch option.kind {
            case .flag:
                guard inline == nil else { throw UsageError(description: "\(option.name) takes no value") }
                parsed.set(option.name)
            case .value(_, let refusal):
                let text: String
                if let inline {
                    text = inline
                } else {
                    guard i < words.endIndex else { throw UsageError(description: "\(option.name) needs a value") }
                    text = words[i]
                    i += 1
                }
                if let expected = refusal(text) {
                    throw UsageError(description: "\(option.name) must be \(expected), not \"\(text)\"")
                }
                parsed.set(option.name, text)
            }
        }
        return (parsed, words[words.endIndex...])
    }

    public func parse(_ words: [String]) throws(UsageError) -> ParsedArguments {
        try parse(words[...]).arguments
    }
}
