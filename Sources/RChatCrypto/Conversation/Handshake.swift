import RChatCore

/// The session handshake, protocol v4 (docs/PROTOCOL.md, "Conversation protocol"): Noise-IK-style, run over a relay link
/// every time either side comes back online.
///
/// Roles come from key order: the side whose pinned account public key sorts first initiates,
/// so two sides linked at the same moment never both initiate. The responder's account
/// (static) key is known to the initiator in advance; the initiator's travels sealed in the
/// first message, so a first message made under an account key other than the pinned one
/// still opens, proves that key, and is reported as `HandshakeError.keysDontMatch` (never
/// answered). The DHs use the keys' X25519 forms. Each message carries a fresh ephemeral.
///
/// Message 1:
///
///     u8  protocol version (4)          ─┐ clear, mixed into the transcript
///     u8  message number (1)             │
///     32  ephemeral X25519 public key   ─┘
///     48  initiator's account public key, sealed under the "es" key (32 + 16 tag)
///     ..  sealed payload under the "ss" key
///
/// Message 2:
///
///     u8  protocol version (4), u8 message number (2), 32 ephemeral   (clear, as above)
///     ..  sealed payload under the "se" key
///
/// Each seal is XChaCha20-Poly1305, nonce = counterNonce(0, message number), associated data
/// = transcript hash; every key seals exactly once.
///
/// Payload (plaintext):
///
///     u8  protocol version (4)
///     32  sender's account public key   (= the sealed static key in message 1; ≠ pinned →
///                                        HandshakeError.keysDontMatch once everything below verifies)
///     32  sender's device public key
///     64  DeviceCertificate (account signs device key)
///     u8  flags: bit 0 = started over (no saved state for this conversation)
///     u64 sender's reconnect counter (0 when started over)
///     u16 length ‖ extension bytes (opaque to the handshake, e.g. a could-not-read notice)
///     64  device-key signature over "rchat handshake v4 device signature" ‖ role ‖ h ‖
///         all the payload fields above, h = transcript hash just before sealing
///
/// Transcript: h₀ = BLAKE2b(protocol name), ck₀ = h₀; mix prologue and the responder's account
/// key. Message 1 mixes its header and eᵢ, then DH(eᵢ, Sᵣ) ("es") into ck and seals Sᵢ with
/// its key, then DH(Sᵢ, Sᵣ) ("ss") and seals the payload; message 2 mixes its header and eᵣ,
/// then DH(eᵢ, eᵣ) ("ee") and DH(Sᵢ, eᵣ) ("se"). Each DH: ck' = deriveKey(ck, dh), message
/// key = deriveKey(ck, dh) with distinct contexts. Sealed bytes are mixed into h. Session
/// keys: one per direction from the final ck and h; session id = BLAKE2b("rchat session id
/// v4" ‖ h)[0..<16].
///
/// Who can reach Keys don't match: only someone who can put a first message on the link (the
/// relay, or whoever holds the conversation's rendezvous code) and knows the responder's
/// account public key, and only with an account key of their own. They cannot read or answer
/// anything; they can stop the conversation until its code is entered again, as a relay can
/// always stop it by dropping frames. A responder under other keys cannot open the first
/// message at all: the initiator sees its handshake fail and retries.
///
/// Freshness: the responder's payload and the session keys depend on both ephemerals. The
/// initiator's payload depends only on its own ephemeral, so the first message is bound to
/// the link it travels on: the prologue is `linkPrologue(code:)`, the rendezvous code the
/// relay linked the two sides on. A first message the relay keeps and delivers on another
/// link (another reconnect counter, another day) does not decrypt there. Within one link a
/// replay yields keys nobody else holds; the engine acts on the initiator's extension only
/// once the first envelope of the session has opened.
public enum Handshake {
    public static let protocolVersion: UInt8 = 5
    static let headerBytes = 2
    /// The initiator's account key as sealed in message 1.
    static let sealedStaticBytes = SigningKey.publicKeyBytes + AEAD.tagBytes
    static let maxMessageBytes = headerBytes + AgreementKey.keyBytes + sealedStaticBytes + 256 + HandshakePayload.maxExtensionBytes

    public enum Role: UInt8, Sendable, Equatable {
        case initiator = 1
        case responder = 2

        public var peer: Role { self == .initiator ? .responder : .initiator }

        /// The side whose account key sorts first initiates.
        public static func of(myAccountKey: [UInt8], peerAccountKey: [UInt8]) -> Role {
            bytesPrecede(myAccountKey, peerAccountKey) ? .initiator : .responder
        }
    }

    /// The prologue of a handshake run on a relay link: the rendezvous code both sides
    /// presented (the relay's `linked` event names it), after a label.
    public static func linkPrologue(code: [UInt8]) -> [UInt8] { Array("rchat link v1".utf8) + code }

    /// This side: its account key, its device key and the account's certificate for it.
    public struct LocalIdentity: Sendable {
        public let account: SigningKey
        public let device: SigningKey
        public let deviceCertificate: [UInt8]

        public init(account: SigningKey, device: SigningKey, deviceCertificate: [UInt8]) {
            self.account = account
            self.device = device
            self.deviceCertificate = deviceCertificate
        }

        /// Issues the certificate on the spot (the account key signs the device key).
        public init(account: SigningKey, device: SigningKey) {
            self.init(account: account, device: device,
                      deviceCertificate: DeviceCertificate.issue(deviceKey: device.publicKey, account: account))
        }
    }

    /// The contact's keys as pinned from its code.
    public struct PinnedKeys: Sendable, Equatable {
        public let accountKey: [UInt8]
        public let deviceKey: [UInt8]

        public init(accountKey: [UInt8], deviceKey: [UInt8]) {
            self.accountKey = accountKey
            self.deviceKey = deviceKey
        }
    }

    /// What this side says about its saved state: nil counter = started over.
    struct Announcement {
        let reconnectCounter: UInt64?
        let extensionBytes: [UInt8]
    }
}

/// Why a handshake failed. Never carries key material beyond a public key.
public enum HandshakeError: Error, Equatable, CustomStringConvertible {
    /// The peer proved an account key other than the pinned one: it sealed that key, made the
    /// static-static DH with it, and its device key (certified by that account) signed.
    case keysDontMatch(presentedAccountKey: [UInt8])
    /// The device certificate is not the pinned account's signature over the device key.
    case badCertificate
    /// The device key's signature over the transcript does not verify.
    case badSignature
    /// Not a handshake message of the expected shape.
    case malformed
    /// The payload did not decrypt: wrong static or ephemeral key, or altered bytes.
    case decryptionFailed
    case unsupportedVersion(UInt8)
    /// Key order says this side plays the other role.
    case wrongRole
    /// A pinned or local key cannot be used for X25519.
    case unusableKey

    public var description: String {
        switch self {
        case .keysDontMatch(let key): return "keys don't match: contact presented account key \(Hex.encode(key))"
        case .badCertificate: return "device certificate is not signed by the contact's account key"
        case .badSignature: return "device signature over the handshake does not verify"
        case .malformed: return "malformed handshake message"
        case .decryptionFailed: return "handshake message did not decrypt"
        case .unsupportedVersion(let v): return "unsupported protocol version \(v)"
        case .wrongRole: return "this side does not play that role in the handshake"
        case .unusableKey: return "key cannot be used for key agreement"
        }
    }
}
