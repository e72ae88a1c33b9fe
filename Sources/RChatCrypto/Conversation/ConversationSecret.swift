import RChatCore

/// The secret two accounts share for their conversation: static–static X25519 of the
/// account keys' agreement forms, bound to both public keys. It depends only on the account
/// keys, so a side that reinstalls and restores its account computes it again — that is what
/// lets it find its contacts at the relay (rendezvous codes) and read envelope headers.
public struct ConversationSecret: Sendable {
    public static let keyBytes = 32
    /// Length of `tag`, the public-safe binding of a notice to this conversation.
    public static let tagBytes = 16

    /// The 32-byte secret, equal on both sides.
    public let key: SecretBytes
    public let myAccountKey: [UInt8]
    public let peerAccountKey: [UInt8]
    /// The keys that seal the headers of envelopes I send and of those the peer sends: one
    /// per direction, so a frame reflected back to its sender does not even open. Derived
    /// once here rather than for every envelope.
    let sendHeaderKey: SecretBytes
    let receiveHeaderKey: SecretBytes

    /// Throws `.malformed` for a peer key that is not a valid Ed25519 point, or one equal to
    /// mine (there is no conversation with oneself: roles and ownership would be undecidable).
    public init(myAccount: SigningKey, peerAccountKey: [UInt8]) throws(CryptoError) {
        guard peerAccountKey != myAccount.publicKey else { throw .malformed("peer account key (it is our own)") }
        guard let peerAgreement = Signature.agreementPublicKey(fromSigningKey: peerAccountKey) else {
            throw .malformed("peer account key")
        }
        let shared = try myAccount.agreementKey().sharedSecret(with: peerAgreement)
        let (first, second) = Self.sorted(myAccount.publicKey, peerAccountKey)
        // Both public keys in a fixed order, so both sides derive the same bytes.
        key = Hash.deriveKey(from: shared, context: "rchat conversation secret v1", first, second)
        myAccountKey = myAccount.publicKey
        self.peerAccountKey = peerAccountKey
        sendHeaderKey = Self.headerKey(from: key, sentBy: myAccountKey)
        receiveHeaderKey = Self.headerKey(from: key, sentBy: peerAccountKey)
    }

    /// The two keys with the one that sorts first (lexicographically) in front.
    public static func sorted(_ a: [UInt8], _ b: [UInt8]) -> (first: [UInt8], second: [UInt8]) {
        bytesPrecede(b, a) ? (b, a) : (a, b)
    }

    /// Which account's relay hosts the conversation between `a` and `b`: the one whose public
    /// key sorts first. Both sides compute it alone and agree.
    public static func relayOwner(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        sorted(a, b).first
    }

    /// The account whose relay hosts this conversation.
    public var relayOwner: [UInt8] { Self.relayOwner(myAccountKey, peerAccountKey) }

    /// True when my relay hosts the conversation.
    public var hostedOnMyRelay: Bool { relayOwner == myAccountKey }

    /// A 16-byte value naming this conversation inside signed statements (could-not-read
    /// notices). Derived one-way, so it reveals nothing about the secret.
    public var tag: [UInt8] {
        Hash.blake2b(Array("rchat conversation tag v1".utf8), key: key, outputBytes: Self.tagBytes)
    }

    /// The key that seals the headers of envelopes sent by `sender` (an account public key).
    private static func headerKey(from key: SecretBytes, sentBy sender: [UInt8]) -> SecretBytes {
        Hash.deriveKey(from: key, context: "rchat envelope header key v1", sender)
    }
}
