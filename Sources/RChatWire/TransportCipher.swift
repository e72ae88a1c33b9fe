import RChatCrypto

/// One side's sealed channel: a key and a frame counter per direction. Each frame's nonce
/// is its counter, so a frame replayed, reordered or dropped no longer opens.
public struct TransportCipher: Sendable {
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

    public mutating func seal(_ body: [UInt8]) -> [UInt8] {
        defer { sentFrames += 1 }
        return AEAD.seal(body, nonce: AEAD.counterNonce(sentFrames, direction: sendDirection), key: sendKey)
    }

    /// Opens the next frame; throws (and stays unusable for this frame) if it is not the
    /// very next one the peer sealed.
    public mutating func open(_ frame: [UInt8]) throws(CryptoError) -> [UInt8] {
        let body = try AEAD.open(frame[...], counter: receivedFrames, direction: receiveDirection, key: receiveKey)
        receivedFrames += 1
        return body
    }
}
