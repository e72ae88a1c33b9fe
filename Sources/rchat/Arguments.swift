/// The words after `rchat COMMAND`: positionals and `--flag [value]` options, checked
/// against what the command accepts, so a typo is a usage error and never a silent default.
struct Arguments: Sendable {
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    private(set) var positionals: [String] = []
    private var values: [String: String] = [:]
    private var switches: Set<String> = []

    /// `valued` options take the next word; `flags` take none. `--home` and `--device-dir`
    /// are accepted by every command.
    init(_ words: ArraySlice<String>, valued: Set<String> = [], flags: Set<String> = []) throws(UsageError) {
        let valued = valued.union(["--home", "--device-dir"])
        let flags = flags.union(["--help", "-h"])
        var i = words.startIndex
        var onlyPositionals = false
        while i < words.endIndex {
            let word = words[i]
            i += 1
            if onlyPositionals || !word.hasPrefix("-") || word == "-" {
                positionals.append(word)
                continue
            }
            if word == "--" { onlyPositionals = true; continue }
            var name = word, inline: String?
            if let eq = word.firstIndex(of: "="), word.hasPrefix("--") {
                name = String(word[..<eq]); inline = String(word[word.index(after: eq)...])
            }
            if valued.contains(name) {
                if let inline { values[name] = inline; continue }
                guard i < words.endIndex else { throw UsageError(description: "\(name) needs a value") }
                values[name] = words[i]
                i += 1
            } else if flags.contains(name), inline == nil {
                switches.insert(name)
            } else {
                throw UsageError(description: "unknown option \(word)")
            }
        }
    }

    func value(_ name: String) -> String? { values[name] }
    func has(_ name: String) -> Bool { switches.contains(name) }
    var wantsHelp: Bool { has("--help") || has("-h") }

    func positional(_ index: Int, _ what: String) throws(UsageError) -> String {
        guard index < positionals.count else { throw UsageError(description: "missing \(what)") }
        return positionals[index]
    }

    func expectPositionals(max: Int) throws(UsageError) {
        if positionals.count > max { throw UsageError(description: "unexpected argument \"\(positionals[max])\"") }
    }
}
