/// Help text generated from declared options, so what a program documents is what it accepts.
public enum OptionHelp {
    /// One option per line, its help aligned in a column; a help text's later lines are
    /// indented to that column:
    ///
    ///       --home DIR        account data (default …)
    ///       --device-dir DIR  this machine's device keystore (default …;
    ///                         or RCHAT_DEVICE_DIR)
    public static func list(_ options: [Option], indent: Int = 2) -> String {
        let names = options.map { ([$0.synopsis] + $0.aliases).joined(separator: ", ") }
        let width = names.map(\.count).max() ?? 0
        let column = indent + width + 2
        var lines: [String] = []
        for (option, name) in zip(options, names) {
            let help = option.help.split(separator: "\n", omittingEmptySubsequences: false)
            lines.append(String(repeating: " ", count: indent) + name + String(repeating: " ", count: width + 2 - name.count) + (help.first ?? ""))
            for more in help.dropFirst() { lines.append(String(repeating: " ", count: column) + more) }
        }
        return lines.map { $0.trimmingTrailingSpaces }.joined(separator: "\n")
    }

    /// `usage: PROGRAM REQUIRED… [--option VALUE]…`, wrapped before `width` columns with
    /// later lines aligned under the first option.
    public static func usage(_ program: String, required: [Option] = [], optional: [Option], width: Int = 100) -> String {
        let head = "usage: \(program) "
        let words = required.map(\.synopsis) + optional.map { "[\($0.synopsis)]" }
        var lines: [String] = []
        var line = head
        for word in words {
            if line.count > head.count && line.count + 1 + word.count > width {
                lines.append(line)
                line = String(repeating: " ", count: head.count)
            }
            line += (line.hasSuffix(" ") ? "" : " ") + word
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var s = Substring(self)
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
