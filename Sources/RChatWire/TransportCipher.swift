import RChatCore
import RChatCrypto

/// One side's sealed channel: a key and a frame counter per direction. Each frame's nonce
/// is its counter, so a frame replayed, reordered or dropped no longer opens.
///
/// Every body is padded before it is sealed (`Padding`: body ‖ zeros ‖ u32 body length), so
/// a frame's length on the wire — its 4-byte length, the sealed body and the 16-byte tag —
/// is one of `Padding.wireSizes` (`.toWireSize`), or the body and its trailer only
/// (`.trailerOnly`, for the relay's small control frames). Opening removes the padding.
public struct TransportCipher: Sendable {
    /// How much a sealed body is padded.
    public enum Fill: Sendable {
        /// To the next wire size: every client frame, and every relay frame that carries a payload.
        case toWireSize
        /// The trailer only.
        case trailerOnly
    }

    /// What the wire adds outside the padded body: the length prefix and the tag.
    public static let outsideBytes = 4 + AEAD.tagBytes

    private let sendKey: SecretBytes
    private let receiveKey: SecretBytes
    private let sendDirection: UInt8
    private let receiveDirection: UInt8
    public private(set) var sentFrames: UInt64 = 0
    public private(set) var receivedFrames: UInt64 = 0

    static let clientToRelay: UInt8 = 0x01
    static let relayToClient: UInt8 = 0x02

    init(sendKey: SecretBytes, receiveKey: SecretBytes, sendDirection: UInt8, receiveDirection: UInt8) {
        self.sendKey = sendKey
        self.receiveKey = receiveKey
        self.sendDirection = sendDirection
        self.receiveDirection = receiveDirection
    }

    public mutating func seal(_ body: [UInt8], fill: Fill = .toWireSize) -> [UInt8] {
        defer { sentFrames += 1 }
        let padded = Padding.padded(body, sizes: fill == .toWireSize ? Padding.wireSizes : [], outside: Self.outsideBytes)
        return AEAD.seal(padded, nonce: AEAD.counterNonce(sentFrames, direction: sendDirection), key: sendKey)
    }

    /// Opens the next frame; throws (and stays unusable for this frame) if it is not the
    /// very next one the peer sealed.
    /// A frame whose padding does not unpad is refused like one that does not open.
    public mutating func open(_ frame: [UInt8]) throws(CryptoError) -> [UInt8] {
        var body = try AEAD.open(frame[...], counter: receivedFrames, direction: receiveDirection, key: receiveKey)
        receivedFrames += 1
        do {
            // Every byte opened is authenticated: only the length needs checking.
            let inner = try Padding.unpadded(body[...], checkingZeros: false)
            body.removeSubrange(inner.endIndex...)
        } catch {
            throw .malformed("\(error)")
        }
        return body
    }
}
