/// Tab completion in the composer: the name of a `/command`, then, for a command that
/// takes a contact, the contact's name (whole, spaces and all). Pure: the view passes the
/// commands and names it knows.
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
    /// a completion is written as the candidate is.
    public static func complete(_ text: String, commands: [String], takingAName: Set<String>, names: [String]) -> Completion {
        guard text.hasPrefix("/") else { return .none }
        let body = text.dropFirst()
        guard let space = body.firstIndex(of: " ") else {
            return pick(prefix: String(body), from: commands, lead: "/", tail: " ")
        }
        let command = body[..<space].lowercased()
        guard takingAName.contains(command) else { return .none }
        let typed = body[body.index(after: space)...].drop { $0 == " " }
        return pick(prefix: String(typed), from: names, lead: "/" + command + " ", tail: "")
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
