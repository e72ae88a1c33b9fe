import RChatCore
import RChatCrypto

/// A first message to someone who has not added us yet (or before any session exists),
/// sent to the invite token from their code and held by their relay even while they are
/// offline (docs/PROTOCOL.md, "Relay protocol").
///
/// Sealed to the recipient's account key (crypto_box_seal); inside, the sender's contact
/// code and an account-key signature over everything, bound to the recipient — so nobody
/// else can write in the sender's name, and a request cannot be redirected to another person.
///
/// Layout before sealing: `Padding` of (u8 version (3) ‖ u16-long contact code ‖ 16 message
/// id ‖ u64 created at ‖ u32-long `MessageContent` encoding ‖ 64 signature), as long as
/// makes the sealed payload with its own padding trailer one of `Padding.payloadSizes`:
/// the relay sees the size class, never the content's length. (Version 1 carried text in
/// place of the content, version 2 was not padded; both are refused, not misread.)
public struct MessageRequest: Equatable {
    static let version: UInt8 = 3
    static let label = Array("rchat message request v1".utf8)

    public var senderCode: String
    public var messageID: MessageID
    public var createdAt: Int64
    public var content: MessageContent

    public init(senderCode: String, messageID: MessageID, createdAt: Int64, content: MessageContent) {
        self.senderCode = senderCode
        self.messageID = messageID
        self.createdAt = createdAt
        self.content = content
    }

    /// The payload handed to the relay: the sealed box, padded.
    public func sealed(from account: SigningKey, to recipientAccountKey: [UInt8]) throws(EngineError) -> [UInt8] {
        let body = content.encoded()
        var w = ByteWriter(capacity: 512 + body.count)
        w.u8(Self.version)
        w.string(senderCode)
        w.raw(messageID)
        w.u64(UInt64(bitPattern: createdAt))
        w.long(body)
        let signature = account.sign(Self.label + recipientAccountKey + w.bytes)
        w.raw(signature)
        guard let recipient = Signature.agreementPublicKey(fromSigningKey: recipientAccountKey),
              let box = try? SealedBox.seal(Padding.padded(w.bytes, sizes: Padding.payloadSizes,
                                                           outside: SealedBox.overheadBytes + Padding.trailerBytes), to: recipient)
        else { throw .crypto("the contact's account key cannot receive a request") }
        return Padding.padded(box, sizes: Padding.payloadSizes)
    }

    /// Opens a request (the padded payload) sent to this account; nil for anything not genuinely from the code
    /// it carries.
    static func open(_ payload: [UInt8], account: SigningKey) -> (request: MessageRequest, code: ContactCode)? {
        guard let box = try? Padding.unpadded(payload), let padded = try? SealedBox.open(box, with: account.agreementKey()),
              let plain = try? Padding.unpadded(padded), plain.count > SigningKey.signatureBytes else { return nil }
        let signed = Array(plain.dropLast(SigningKey.signatureBytes))
        let signature = Array(plain.suffix(SigningKey.signatureBytes))
        var r = ByteReader(signed)
        guard let version = try? r.u8(), version == Self.version,
              let codeText = try? r.string(), let code = try? ContactCode(parsing: codeText),
              let idBytes = try? r.raw(16), let id = MessageID(bytes: idBytes),
              let created = try? r.u64(),
              let body = try? r.long(max: MessageContent.maximumEncodedBytes), let content = try? MessageContent(decoding: body),
              r.isAtEnd,
              Signature.verify(signature, message: label + account.publicKey + signed, publicKey: code.accountKey),
              (try? code.verify()) != nil
        else { return nil }
        return (MessageRequest(senderCode: codeText, messageID: id, createdAt: Int64(bitPattern: created), content: content), code)
    }
}
