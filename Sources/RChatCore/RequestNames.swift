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
}
