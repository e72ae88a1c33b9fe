import Foundation

/// How a typed name finds a contact: the same name wins; otherwise names are compared
/// folded (canonical composition, then lowercase), so "SAM", "sam" and "Sam" are one name,
/// as are "ÉVA" and "e\u{301}va". Width is not folded: "Ｂｏｂ" and "Bob" are two names.
public enum ContactNames {
    public static func key(_ name: String) -> String {
        name.precomposedStringWithCanonicalMapping.lowercased()
    }

    /// The one of `candidates` that `typed` picks: the same name, else the only one whose
    /// folded name matches; nil when none or several do.
    public static func pick<C>(_ typed: String, from candidates: [C], name: (C) -> String) -> C? {
        if let same = candidates.first(where: { name($0) == typed }) { return same }
        let key = Self.key(typed)
        let folded = candidates.filter { Self.key(name($0)) == key }
        return folded.count == 1 ? folded[0] : nil
    }
}
