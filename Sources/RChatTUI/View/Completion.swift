import Foundation

/// Tab completion in the composer: the name of a `/command`, then, for a command that
/// takes a contact, the contact's name (whole, spaces and all), or for a command that takes
/// one of a few words (`/timer 1h`), the word. Pure: the view passes the commands, names and
/// words it knows.
public enum Completion: Equatable, Sendable {
    /// The composer's new text: the only candidate, with a space after a command that
    /// takes an argument's place.
    case completed(String)
    /// Several candidates: the text extended as far as they agree, and the candidates to
    /// show.
    case candidates(String, [String])
    /// Nothing starts that way.
    case none

    /// Completes `text` (the whole composer, which starts with `/`). Matching ignores case;
    /// a completion is written as the candidate is. `words`: each command that takes one of
    /// a fixed set of words, with them.
    public static func complete(_ text: String, commands: [String], takingAName: Set<String>, names: [String],
                                words: [String: [String]] = [:]) -> Completion {
        guard text.hasPrefix("/") else { return .none }
        let body = text.dropFirst()
        guard let space = body.firstIndex(of: " ") else {
            return pick(prefix: String(body), from: commands, lead: "/", tail: " ")
        }
        let command = body[..<space].lowercased()
        let choices: [String]
        if let fixed = words[command] { choices = fixed } else if takingAName.contains(command) { choices = names } else { return .none }
        let typed = body[body.index(after: space)...].drop { $0 == " " }
        return pick(prefix: String(typed), from: choices, lead: "/" + command + " ", tail: "")
    }

    private static func pick(prefix: String, from all: [String], lead: String, tail: String) -> Completion {
        var seen = Set<String>()
        let matches = all.filter { $0.lowercased().hasPrefix(prefix.lowercased()) && seen.insert($0).inserted }
        switch matches.count {
        case 0: return .none
        case 1: return .completed(lead + matches[0] + tail)
        default:
            // Extend by what every candidate has next (ignoring case), written as the first has it.
            var common = Array(matches[0])
            for other in matches.dropFirst() {
                let o = Array(other)
                var n = 0
                while n < common.count, n < o.count, common[n].lowercased() == o[n].lowercased() { n += 1 }
                common = Array(common[..<n])
            }
            let extended = common.count > prefix.count ? String(common) : prefix
            return .candidates(lead + extended, matches)
        }
    }
}

/// Paths as typed in `/file`, `/photo` and the save prompt: `~` is the home directory.
public enum TypedPath {
    /// `~` and `~/…` with `home` put in; anything else as typed.
    public static func expanded(_ path: String, home: String?) -> String {
        guard let home, path == "~" || path.hasPrefix("~/") else { return path }
        return home + path.dropFirst()
    }

    /// A directory entry, as completion sees it.
    public struct Entry: Equatable, Sendable {
        public var name: String
        public var isDirectory: Bool
        public init(name: String, isDirectory: Bool) { self.name = name; self.isDirectory = isDirectory }
    }

    /// Tab on a path: the entries of its directory that start with its last part (hidden
    /// ones only when that part starts with a dot). One: the path completed, a directory
    /// with `/` after it. Several: extended as far as they agree, and their names (a
    /// directory's with `/`). `list` reads a directory (nil: it cannot be read); `lead` is
    /// what comes before the path in the line.
    public static func complete(_ typed: String, lead: String = "", home: String?,
                                list: (String) -> [Entry]?) -> Completion {
        let slash = typed.lastIndex(of: "/")
        let directoryPart = slash.map { String(typed[...$0]) } ?? ""
        let prefix = slash.map { String(typed[typed.index(after: $0)...]) } ?? typed
        let directory = directoryPart.isEmpty ? "." : expanded(directoryPart, home: home)
        guard let entries = list(directory) else { return .none }
        let matches = entries.filter { $0.name.hasPrefix(prefix) && (prefix.hasPrefix(".") || !$0.name.hasPrefix(".")) }
            .sorted { $0.name < $1.name }
        func shown(_ e: Entry) -> String { e.isDirectory ? e.name + "/" : e.name }
        switch matches.count {
        case 0: return .none
        case 1: return .completed(lead + directoryPart + shown(matches[0]))
        default:
            var common = Array(matches[0].name.unicodeScalars)
            for other in matches.dropFirst() {
                let o = Array(other.name.unicodeScalars)
                var n = 0
                while n < common.count, n < o.count, common[n] == o[n] { n += 1 }
                common = Array(common[..<n])
            }
            var extended = String.UnicodeScalarView()
            extended.append(contentsOf: common)
            return .candidates(lead + directoryPart + String(extended), matches.map(shown))
        }
    }

    /// The entries of a directory on disk, or nil when it cannot be read.
    public static func entries(of directory: String) -> [Entry]? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return nil }
        return names.map { name in
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory)
            return Entry(name: name, isDirectory: isDirectory.boolValue)
        }
    }
}
