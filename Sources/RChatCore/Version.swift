/// What `rchat --version` and `rchat-relay --version` print: the release, and the wire
/// versions a peer or an operator needs to know whether two builds can talk.
public enum RChatVersion {
    /// The release: raised with every change a user can see (semantic versioning).
    public static let number = "0.9.0"

    /// `rchat 0.9.0 (relay protocol 3)`.
    public static func line(program: String, relayProtocol: UInt8) -> String {
        "\(program) \(number) (relay protocol \(relayProtocol))"
    }
}
