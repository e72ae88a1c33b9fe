import RChatCore
import RChatCrypto

/// Fixed keys, so that every run of a target decodes against the same identities (and a
/// crashing input replays).
enum Fixtures {
    static func signingKey(_ n: UInt8) -> SigningKey {
        var seed = [UInt8](repeating: n, count: 32)
        return try! SigningKey(seed: SecretBytes(consuming: &seed))
    }

    static let alice = signingKey(1)
    static let aliceDevice = signingKey(2)
    static let bob = signingKey(3)
    static let bobDevice = signingKey(4)
    static let relayKey: AgreementKey = {
        var secret = [UInt8](repeating: 5, count: 32)
        return AgreementKey(secretKey: SecretBytes(consuming: &secret))
    }()
    static let relay = RelayAddress(host: "relay.example", port: 7070, publicKey: relayKey.publicKey)

    static func code(_ name: String, _ account: SigningKey, _ device: SigningKey) -> ContactCode {
        ContactCode.signed(name: name, account: account, device: device.publicKey, relay: relay,
                           inviteToken: [UInt8](repeating: 7, count: 16))
    }

    /// Alice's and Bob's views of one conversation.
    static let aliceConversation = try! ConversationSecret(myAccount: alice, peerAccountKey: bob.publicKey)
    static let bobConversation = try! ConversationSecret(myAccount: bob, peerAccountKey: alice.publicKey)

    static func secret(_ n: UInt8) -> SecretBytes {
        var bytes = [UInt8](repeating: n, count: 32)
        return SecretBytes(consuming: &bytes)
    }
}

/// Reads an input as a sequence of pieces: a u16 big-endian length, then that many bytes
/// (the last piece takes what is left). The way several frames are split out of one input.
struct Pieces: Sequence, IteratorProtocol {
    private let input: [UInt8]
    private var offset = 0

    init(_ input: [UInt8]) { self.input = input }

    mutating func next() -> [UInt8]? {
        guard offset < input.count else { return nil }
        guard offset + 2 <= input.count else { defer { offset = input.count }; return Array(input[offset...]) }
        let length = Int(input[offset]) << 8 | Int(input[offset + 1])
        let start = offset + 2, end = Swift.min(input.count, start + length)
        offset = end
        return Array(input[start..<end])
    }

    /// The inverse: pieces joined as `next` splits them.
    static func join(_ pieces: [[UInt8]]) -> [UInt8] {
        var w = ByteWriter()
        for piece in pieces { w.short(piece) }
        return w.bytes
    }
}
