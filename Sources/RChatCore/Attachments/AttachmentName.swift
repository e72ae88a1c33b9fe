/// File names for attachments: the name another person gave a file, made safe to be one
/// file name in one directory, and made unique there.
///
/// `sanitised` leaves no way out of the directory and nothing that misleads on screen:
/// - a name is never a path: of one with `/` or `\` in it only the last part that leaves
///   something is kept ("../../etc/passwd" is "passwd", "report.pdf/" is "report.pdf"), as
///   browsers do with the names of downloads;
/// - control characters (C0 U+0000–U+001F, DEL U+007F, C1 U+0080–U+009F) are dropped, and so
///   are direction controls (U+202A–U+202E embeddings and overrides, U+2066–U+2069 isolates,
///   the marks U+061C, U+200E, U+200F) and the line and paragraph separators U+2028, U+2029:
///   "\u{202E}fdp.exe" is "fdp.exe", which is what it is;
/// - leading dots and whitespace go (no hidden files, no ".."; with them any combining mark
///   that would have sat on them), and trailing whitespace;
/// - at most 255 UTF-8 bytes, cut between characters (grapheme clusters), keeping the
///   extension;
/// - what is left empty (or "." or "..") is "file".
public enum AttachmentName {
    /// The longest name most file systems take, in bytes of UTF-8.
    public static let maximumBytes = 255
    /// The name of a file whose given name leaves nothing.
    public static let fallback = "file"
    /// An extension longer than this (dot included) is part of the name: cutting keeps the
    /// extension only where it is one.
    static let longestExtensionBytes = 32

    public static func sanitised(_ name: String) -> String {
        let kept = String.UnicodeScalarView(name.unicodeScalars.filter { !isDropped($0) })
        let parts = kept.split(omittingEmptySubsequences: true) { $0 == "/" || $0 == "\\" }.map(trimmed)
        let cut = fitted(parts.last { !$0.isEmpty } ?? "", extra: "")
        return cut.isEmpty || cut == "." || cut == ".." ? fallback : cut
    }

    /// Without leading dots, whitespace and the marks that would have combined with them,
    /// and without trailing whitespace.
    private static func trimmed(_ part: Substring.UnicodeScalarView) -> String {
        var text = part.drop { $0 == "." || $0.properties.isWhitespace || isMark($0) }
        while let last = text.last, last.properties.isWhitespace { text = text.dropLast() }
        return String(text)
    }

    /// `name` if `taken` says it is free, else "a (2).pdf", "a (3).pdf", … — the first one
    /// free. The number goes before the extension; a name without one (or a dotfile such as
    /// ".profile") gets it at the end. Numbered names stay within `maximumBytes`, the name
    /// cut to make room.
    public static func unique(_ name: String, taken: (String) -> Bool) -> String {
        guard taken(name) else { return name }
        var n = 2
        while true {
            let candidate = fitted(name, extra: " (\(n))")
            if !taken(candidate) { return candidate }
            n += 1
        }
    }

    /// `name` with `extra` before its extension, cut between characters to `maximumBytes`;
    /// the extension is kept while a character of the rest is left. Trailing whitespace
    /// that a cut exposes goes too.
    static func fitted(_ name: String, extra: String) -> String {
        let (stem, ext) = split(name)
        let budget = maximumBytes - extra.utf8.count - ext.utf8.count
        if stem.utf8.count <= budget { return stem + extra + ext }
        var kept = Substring(stem)
        var bytes = stem.utf8.count
        while bytes > budget, let last = kept.last {
            bytes -= last.utf8.count
            kept = kept.dropLast()
        }
        while let last = kept.last, last.unicodeScalars.allSatisfy(\.properties.isWhitespace) { kept = kept.dropLast() }
        // A name that is one character longer than everything (a cluster of hundreds of
        // combining marks) leaves nothing of itself: it is called "file", its extension kept.
        return (kept.isEmpty ? fallback : String(kept)) + extra + ext
    }

    /// The name before its extension and the extension (from the last dot, dot included);
    /// a dot at the start (a dotfile) or an overlong tail is not an extension.
    static func split(_ name: String) -> (stem: String, ext: String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex,
              name.utf8[dot...].count <= longestExtensionBytes else { return (name, "") }
        return (String(name[..<dot]), String(name[dot...]))
    }

    private static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    private static func isDropped(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true                    // C0, DEL, C1
        case 0x202A...0x202E, 0x2066...0x2069: return true            // embeddings, overrides, isolates
        case 0x061C, 0x200E, 0x200F: return true                      // direction marks
        case 0x2028, 0x2029: return true                              // line and paragraph separators
        default: return false
        }
    }
}
