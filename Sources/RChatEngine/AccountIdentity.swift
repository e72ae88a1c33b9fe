import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatStore
import RChatWire

/// Who this account is: its name, its home relay, its account key (Ed25519, portable,
/// exported with the account) and its invite token.
///
/// The invite token is derived from the mailbox and a random salt (`InviteToken.derived`):
/// the relay registers a token only for the mailbox it derives from, so a stranger who read
/// the token in our code cannot claim it.
public struct AccountIdentity: Sendable {
    public var name: String
    public var relay: RelayAddress
    public let accountKey: SigningKey
    public let inviteSalt: [UInt8]
    /// The seed of the key this account proves itself with at relays: chosen at creation and
    /// kept through key rotation and restores, so the account collects what its relays held
    /// while it was away; the relay learns nothing that names the account.
    let mailboxSeed: SecretBytes
    /// After `keys rotate`: the previous account key and its signature over the new one,
    /// for contacts who have not yet accepted the new key.
    public let previous: Rotation?
    /// After `keys rotate`: the mailbox this account left, handed over to the new one at
    /// each relay (`RelayClient.moveMailbox`) while relays may still hold something for it.
    public let movedFrom: MovedMailbox?
    /// The account row this was opened from (`AccountService.identity`): while the row is
    /// the same, so is the identity, and a running engine keeps it instead of opening the
    /// seeds and deriving the keys again at each look at the store.
    let record: Account?

    public struct Rotation: Sendable {
        public let key: SigningKey
        public let statement: [UInt8]
    }

    public struct MovedMailbox: Sendable {
        public let key: SigningKey
        /// Unix seconds.
        public let at: Int64

        /// Whether a relay may still hold something for it (it holds nothing past 72 h).
        public func mayStillHoldItems(now: Int64) -> Bool { now - at <= 72 * 3600 }
    }

    public init(name: String, relay: RelayAddress, accountKey: SigningKey, inviteSalt: [UInt8],
                mailboxSeed: SecretBytes, previous: Rotation? = nil, movedFrom: MovedMailbox? = nil) {
        self.init(name: name, relay: relay, accountKey: accountKey, inviteSalt: inviteSalt, mailboxSeed: mailboxSeed,
                  previous: previous, movedFrom: movedFrom, record: nil)
    }

    init(name: String, relay: RelayAddress, accountKey: SigningKey, inviteSalt: [UInt8], mailboxSeed: SecretBytes,
         previous: Rotation?, movedFrom: MovedMailbox?, record: Account?) {
        self.record = record
        self.name = name
        self.relay = relay
        self.accountKey = accountKey
        self.inviteSalt = inviteSalt
        self.mailboxSeed = mailboxSeed
        self.previous = previous
        self.movedFrom = movedFrom
    }

    public var mailboxKey: SigningKey {
        // A 32-byte seed always makes a valid key.
        try! SigningKey(seed: mailboxSeed)
    }

    public var mailbox: MailboxID { MailboxID(publicKey: mailboxKey.publicKey) }

    /// The token printed in our code; requests sent to it are held for our mailbox.
    public var inviteToken: InviteToken { InviteToken.derived(mailbox: mailbox, salt: inviteSalt) }

    /// A new account's mailbox seed: derived from its first key, so it is reproducible
    /// (`keys rotate` moves the account to a random one).
    static func firstMailboxSeed(for accountKey: SigningKey) -> SecretBytes {
        Hash.deriveKey(from: accountKey.seed, context: "rchat mailbox key v1")
    }

    /// This account's contact code, as handed out from this device.
    public func contactCode(device: SigningKey) -> ContactCode {
        ContactCode.signed(name: name, account: accountKey, device: device.publicKey, relay: relay, inviteToken: inviteToken.bytes)
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
