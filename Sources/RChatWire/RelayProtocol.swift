/// The relay protocol, version 3 — shared by `rchat-relay` and its clients.
///
/// **Framing.** TCP; every frame is a 4-byte big-endian length and a body of at most
/// `RelayProtocol.maximumFrameBytes`. A larger announced length closes the connection
/// before any of it is buffered.
///
/// **Handshake** (NK-like: the client knows the relay's static X25519 key from the address).
///   1. client → `ClientHello` = "RCR" 0x01 ‖ client ephemeral public key (32), plaintext.
///   2. relay  → `RelayHello`  = "RCR" 0x01 ‖ relay ephemeral public key (32), plaintext.
///   Both compute es = DH(client eph, relay static), ee = DH(client eph, relay eph),
///   transcript h = BLAKE2b("rchat relay v1" ‖ relay static ‖ client eph ‖ relay eph),
///   and two keys k_c2s, k_s2c = KDF(es ‖ ee, direction label, h). Only the holder of the
///   relay's static secret can derive them, and fresh ephemerals on both sides make every
///   connection's keys new.
/// From here on every frame body is XChaCha20-Poly1305 under the direction's key with a
/// nonce made of a per-direction counter starting at 0; a replayed, reordered, dropped or
/// altered frame fails to open, and the relay answers with an `error` and closes.
///
/// **Padding.** Every sealed body is `Padding`: message ‖ zero bytes ‖ u32 message length
/// (`TransportCipher`). A client pads every frame, and the relay every `deliver`, so that
/// its length on the wire (length prefix, body, tag) is one of 256 B, 1 KiB, 4 KiB, 16 KiB
/// and 64 KiB + 80 B (`Padding.wireSizes`); the relay's other frames carry the trailer only.
/// Inside, every `send`/`sendAhead`/`request` payload is itself padded end to end to one of
/// 176 B, 944 B, 4,016 B, 16,304 B and 64 KiB (`Padding.payloadSizes`; a payload of size S
/// then travels in wire size S + 80), envelopes and requests inside their encryption, so
/// the relay sees a payload's size class, not its kind or length.
///
/// **Identity.** The relay's first sealed frame is `challenge` (32 fresh random bytes).
/// The client answers `auth` = mailbox public key ‖ Ed25519 signature over
/// "rchat relay auth v1" ‖ h ‖ challenge — bound to this connection's transcript, so it
/// cannot be replayed elsewhere. The relay learns MailboxID = BLAKE2b("rchat mailbox v1" ‖
/// key) and answers `welcome`. Any other frame before that is an error.
///
/// **Messages** (sealed bodies: one type byte, fields big-endian):
///
/// | client → relay | fields |
/// |---|---|
/// | 0x01 auth | mailbox key 32, signature 64 |
/// | 0x02 present | n u8 (1…16), n × rendezvous code 32 |
/// | 0x03 registerInvites | n u8 (1…16), n × invite salt 16: the relay registers, for this mailbox, token = BLAKE2b-128("rchat invite v1" ‖ mailbox id ‖ salt) (`InviteToken.derived`) |
/// | 0x04 send | seq u64, link u32, payload; link 0: cover traffic, held for this connection's own mailbox (answered `sent` outcome 1, counted in its quotas, handed back as `deliver` with origin kind 3) |
/// | 0x05 request | seq u64, invite token 16, payload |
/// | 0x06 acknowledge | n u16 (1…1024), n × held item id u64 |
/// | 0x07 ping | value u64 |
/// | 0x08 sendAhead | as send; handed over ahead of what the peer's mailbox already holds (handshakes) |
/// | 0x09 moveMailbox | old mailbox key 32, its signature 64 over `MailboxMove.statement(old id, this mailbox id)`: what is held for the old mailbox now moves here, and its invites are dropped |
/// | 0x0A leave | link u32: this end gives the link up; the relay forgets it and sends the peer `peerGone` (a link not held here is ignored) |
///
/// | relay → client | fields |
/// |---|---|
/// | 0x81 challenge | 32 random bytes |
/// | 0x82 welcome | mailbox id 32, relay time i64, items held u32 |
/// | 0x83 linked | link u32, rendezvous code 32 (never the peer's mailbox id) |
/// | 0x84 peerGone | link u32 (later sends on it are held for the peer) |
/// | 0x85 sent | seq u64, outcome u8 (0 forwarded live, 1 held) — this is "Sent" |
/// | 0x86 refused | seq u64, reason u8 (`RefusalReason`); nothing was held |
/// | 0x87 deliver | item id u64, held at i64, link u32 (0: not live here), origin kind u8, origin (kind 1: rendezvous code 32; kind 2: invite token 16; kind 3: this mailbox's own cover, nothing), payload |
/// | 0x88 drained | — (nothing more is waiting for this mailbox right now) |
/// | 0x89 pong | value u64 |
/// | 0xEE error | code u8 (`RelayErrorCode`); the relay closes after it |
///
/// **Delivery.** Everything for a mailbox — a live frame, a held frame, a message request —
/// goes through one queue per mailbox and reaches the client as `deliver`, at most a window
/// of them unacknowledged. The relay deletes an item only when the client `acknowledge`s it
/// ("I stored it"); a connection that goes away leaves the unacknowledged rest queued, handed
/// over again, oldest first, next time. A plaintext `error` (0xEE code) can also come
/// before the keys exist.
///
/// **What the relay learns.** Per connection: its address and a mailbox id (a hash of a key
/// that names no account); which rendezvous codes it presents (random-looking, new every
/// day and every session; docs/PROTOCOL.md "What a relay can link") and which links it is in; per frame: its size class
/// (see Padding), time and the mailbox it is held for — not its kind: a message, a receipt
/// and a dummy of one size class are alike; cover it knows by link 0, as it must hold it. It never sees a peer's mailbox id in `linked` or `deliver`
/// (nothing a client is told names another mailbox), and it logs links by number only,
/// never the two connections or mailboxes a link joins. An operator watching a live relay
/// can still see that two connections were linked at one moment; what it does not get is a
/// stable record of who talks to whom.
///
/// **Quotas.** Per mailbox the relay holds at most `--quota` conversation frames (default
/// 10,000) and `--quota-bytes` bytes of their payloads (default 256 MiB), counting what is
/// held and what was handed over but not yet acknowledged; message requests count apart,
/// against `--request-quota` and an hourly rate, never against the other two. A frame that
/// would go beyond a quota is `refused` (reason 1, 7 or 6) and nothing is held; the sender
/// keeps it and tries again later. Counts fall with acknowledgements and expiry, move with a
/// mailbox move, and are recomputed from what `--persist` loads at start. A node of a
/// cluster (`--cluster`) that cannot reach the storage it holds frames in refuses with
/// reason 8 (`clusterUnavailable`) until it can again.
///
/// **Keepalive.** An authenticated connection with no code waiting and no link that sends
/// nothing for the relay's idle timeout (300 s by default) is closed with `timeout`; a
/// client pings every `keepaliveSeconds` to stay.
public enum RelayProtocol {
    public static let version: UInt8 = 3
    public static let magic: [UInt8] = [0x52, 0x43, 0x52] // "RCR"
    /// Largest payload a client may send in one frame.
    public static let maximumPayloadBytes = 64 * 1024
    /// Largest frame body on the wire: payload, fields and the AEAD tag.
    public static let maximumFrameBytes = maximumPayloadBytes + 256
    public static let challengeBytes = 32
    public static let maximumCodesPerPresent = 16
    public static let maximumInvitesPerRegister = 16
    public static let maximumAcknowledgementsPerFrame = 1024
    /// How often a client that stays connected pings: well under any relay's idle timeout.
    public static let keepaliveSeconds = 60.0

    static let transcriptLabel = Array("rchat relay v1".utf8)
    static let authLabel = Array("rchat relay auth v1".utf8)
    static let mailboxLabel = Array("rchat mailbox v1".utf8)
}

/// Why the relay closed a connection.
public enum RelayErrorCode: UInt8, Sendable, CustomStringConvertible {
    case malformed = 1
    case oversized = 2
    case notAuthenticated = 3
    case badSignature = 4
    case decryptionFailed = 5
    case timeout = 6
    case busy = 7
    case unsupportedVersion = 8
    case internalError = 9
    case shuttingDown = 10

    public var description: String {
        switch self {
        case .malformed: return "malformed frame"
        case .oversized: return "frame too large"
        case .notAuthenticated: return "frame before authentication"
        case .badSignature: return "bad signature"
        case .decryptionFailed: return "frame failed to decrypt (altered, replayed or reordered)"
        case .timeout: return "too slow"
        case .busy: return "relay is at its connection limit"
        case .unsupportedVersion: return "unsupported protocol version"
        case .internalError: return "relay internal error"
        case .shuttingDown: return "relay is shutting down"
        }
    }
}

/// Why the relay refused to take a frame; the sender keeps it and tries again later.
public enum RefusalReason: UInt8, Sendable, CustomStringConvertible {
    case quotaExceeded = 1
    case unknownLink = 2
    case unknownInvite = 3
    case tooLarge = 4
    case relayFull = 5
    /// The recipient holds as many message requests as the relay takes for one mailbox, or
    /// was sent too many lately; its conversations' frames are not affected.
    case requestQuotaExceeded = 6
    /// The payload would take the recipient's held conversation frames past the relay's byte
    /// quota per mailbox (`--quota-bytes`); room comes back as the recipient acknowledges.
    case byteQuotaExceeded = 7
    /// A cluster node cannot reach the storage it holds frames in (NATS JetStream): nothing
    /// was held; the node takes frames again by itself once its storage answers.
    case clusterUnavailable = 8

    public var description: String {
        switch self {
        case .quotaExceeded: return "the recipient's mailbox is full"
        case .unknownLink: return "no such link"
        case .unknownInvite: return "no such invite"
        case .tooLarge: return "payload too large"
        case .relayFull: return "the relay is full"
        case .requestQuotaExceeded: return "the recipient has too many message requests waiting"
        case .byteQuotaExceeded: return "the recipient's mailbox holds its quota of bytes"
        case .clusterUnavailable: return "the relay cannot reach its storage right now"
        }
    }
}
