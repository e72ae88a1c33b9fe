/// Until RChatCore's `AttachmentName` lands: the same two functions, minimal.
enum AttachmentName {
    static func sanitised(_ name: String) -> String {
        var s = String(String.UnicodeScalarView(name.unicodeScalars.filter {
            $0.value >= 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value) && $0 != "/" && $0 != "\\"
        }))
        while s.hasPrefix(".") || s.hasPrefix(" ") { s.removeFirst() }
        while s.utf8.count > 255 { s.removeLast() }
        return s.isEmpty ? "file" : s
    }

    static func unique(_ name: String, taken: (String) -> Bool) -> String {
        guard taken(name) else { return name }
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let stem = dot.map { String(name[..<$0]) } ?? name
        let ext = dot.map { String(name[$0...]) } ?? ""
        var n = 2
        while taken("\(stem) (\(n))\(ext)") { n += 1 }
        return "\(stem) (\(n))\(ext)"
    }
}
