/// The name a stranger's message request is listed under: the name in their code, or, when
/// another contact already has it, that name with a short fingerprint of their account key —
/// a few fixed candidates, so taking in a request costs the same however many strangers
/// chose one name (a counter, "Sam (2)", "Sam (3)", …, costs one look-up per namesake).
public enum RequestNames {
    /// Candidates in order of preference; the last is unique to the account key.
    public static func candidates(for name: String, fingerprint: [UInt8]) -> [String] {
        let hex = Hex.encode(fingerprint)
        return [name] + [4, 8, hex.count].map { "\(name) (\(hex.prefix($0)))" }
    }

    /// The name a request listed as one of `candidates` (after the first) was taken from:
    /// "Sam" for "Sam (3f2a)"; nil for a name without a fingerprint after it.
    public static func namesake(of listed: String) -> String? {
        guard listed.hasSuffix(")"), let open = listed.range(of: " (", options: .backwards) else { return nil }
        let inside = listed[open.upperBound..<listed.index(before: listed.endIndex)]
        guard [4, 8, 32].contains(inside.count), inside.allSatisfy({ $0.isHexDigit && !$0.isUppercase }),
              open.lowerBound > listed.startIndex else { return nil }
        return String(listed[..<open.lowerBound])
    }

    /// The row the conversation with `contact` shows when a message request comes from
    /// someone whose code uses that name (`used`) with other keys (seed wording, issue 26).
    public static func namesakeRow(used: String, contact: String) -> String {
        "Someone using the name \(used) sent a message request with different keys. "
            + "If \(contact) reinstalled rChat, check their new code with them before you accept it."
    }
}
