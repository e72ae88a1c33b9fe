import RChatCore

/// The encrypted part of each handshake message (layout in Handshake.swift).
struct HandshakePayload: Equatable {
    static let maxExtensionBytes = Int(UInt16.max)
    static let startedOverFlag: UInt8 = 0x01

    var version: UInt8 = Handshake.protocolVersion
    var accountKey: [UInt8]
    var deviceKey: [UInt8]
    var deviceCertificate: [UInt8]
    var startedOver: Bool
    var reconnectCounter: UInt64
    var extensionBytes: [UInt8]

    /// Everything the device signature covers (all but the signature itself).
    func body() -> [UInt8] {
        var w = ByteWriter(capacity: 150 + extensionBytes.count)
        w.u8(version)
        w.raw(accountKey)
        w.raw(deviceKey)
        w.raw(deviceCertificate)
        w.u8(startedOver ? Self.startedOverFlag : 0)
        w.u64(reconnectCounter)
        w.short(extensionBytes)
        return w.bytes
    }

    /// What the device key signs: its role and the transcript so far (which holds both
    /// ephemerals once there are two), plus the payload, so the signature belongs to this
    /// handshake and no other.
    static func signedMessage(role: Handshake.Role, transcript: [UInt8], body: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 64 + transcript.count + body.count)
        w.long(Array("rchat handshake v4 device signature".utf8))
        w.u8(role.rawValue)
        w.raw(transcript)
        w.raw(body)
        return w.bytes
    }

    /// Splits a decrypted payload into fields and the trailing signature. The version comes
    /// first so a future layout is reported as such, not as garbage.
    static func decode(_ plaintext: [UInt8]) throws(HandshakeError) -> (payload: HandshakePayload, body: [UInt8], signature: [UInt8]) {
        guard plaintext.count > SigningKey.signatureBytes else { throw .malformed }
        let body = Array(plaintext[..<(plaintext.count - SigningKey.signatureBytes)])
        let signature = Array(plaintext[(plaintext.count - SigningKey.signatureBytes)...])
        var r = ByteReader(body)
        do {
            let version = try r.u8()
            guard version == Handshake.protocolVersion else { throw HandshakeError.unsupportedVersion(version) }
            let account = try r.raw(SigningKey.publicKeyBytes)
            let device = try r.raw(SigningKey.publicKeyBytes)
            let certificate = try r.raw(SigningKey.signatureBytes)
            let flags = try r.u8()
            guard flags & ~startedOverFlag == 0 else { throw HandshakeError.malformed }
            let counter = try r.u64()
            let ext = try r.short()
            guard r.isAtEnd else { throw HandshakeError.malformed }
            let payload = HandshakePayload(version: version, accountKey: account, deviceKey: device,
                                           deviceCertificate: certificate, startedOver: flags & startedOverFlag != 0,
                                           reconnectCounter: counter, extensionBytes: ext)
            return (payload, body, signature)
        } catch let e as HandshakeError {
            throw e
        } catch {
            throw .malformed
        }
    }
}
