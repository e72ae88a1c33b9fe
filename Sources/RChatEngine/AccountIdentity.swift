import RChatCore
import RChatCrypto

/// Who this account is: its name, its home relay, its account key (Ed25519, portable,
/// exported with the account) and its invite token.
public struct AccountIdentity: Sendable {
    public var name: String
    public var relay: RelayAddress
    public let accountKey: SigningKey
    public let inviteToken: [UInt8]
    /// The seed of the key this account proves itself with at relays: chosen at creation and
    /// kept through key rotation and restores, so the account collects what its relays held
    /// while it was away; the relay learns nothing that names the account.
    let mailboxSeed: SecretBytes
    /// After `keys rotate`: the previous account key and its signature over the new one,
    /// for contacts who have not yet accepted the new key.
    public let previous: Rotation?

    public struct Rotation: Sendable {
        public let key: SigningKey
        public let statement: [UInt8]
    }

    public static let inviteTokenBytes = 16

    public init(name: String, relay: RelayAddress, accountKey: SigningKey, inviteToken: [UInt8],
                mailboxSeed: SecretBytes, previous: Rotation? = nil) {
        self.name = name
        self.relay = relay
        self.accountKey = accountKey
        self.inviteToken = inviteToken
        self.mailboxSeed = mailboxSeed
        self.previous = previous
    }

    public var mailboxKey: SigningKey {
        // A 32-byte seed always makes a valid key.
        try! SigningKey(seed: mailboxSeed)
    }

    /// A new account's mailbox seed: derived from its first key, so it is reproducible.
    static func firstMailboxSeed(for accountKey: SigningKey) -> SecretBytes {
        Hash.deriveKey(from: accountKey.seed, context: "rchat mailbox key v1")
    }

    /// This account's contact code, as handed out from this device.
    public func contactCode(device: SigningKey) -> ContactCode {
        ContactCode(name: name, accountKey: accountKey.publicKey, deviceKey: device.publicKey,
                    deviceCertificate: DeviceCertificate.issue(deviceKey: device.publicKey, account: accountKey),
                    relay: relay, inviteToken: inviteToken)
    }
}

/// The number two people compare to be sure they pinned each other's real keys: a
/// fingerprint of both account keys, the same on both sides.
public enum SafetyNumber {
    public static func of(_ a: [UInt8], _ b: [UInt8]) -> String {
        let (first, second) = a.lexicographicallyPrecedes(b) ? (a, b) : (b, a)
        let digest = Hash.blake2b(Array("rchat safety number v1".utf8) + first + second, outputBytes: 60)
        // 12 groups of 5 digits, each from 5 bytes of the digest.
        return (0..<12).map { g in
            let value = digest[g * 5..<g * 5 + 5].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 100_000
            let digits = String(value)
            return String(repeating: "0", count: 5 - digits.count) + digits
        }.joined(separator: " ")
    }
}
