import RChatCore
import RChatCrypto

/// The two plaintext hello frames and the key schedule (see RelayProtocol).
public enum RelayHandshake {
    public static let helloBytes = 4 + 32

    public static func hello(ephemeral: [UInt8]) -> [UInt8] {
        RelayProtocol.magic + [RelayProtocol.version] + ephemeral
    }

    /// The ephemeral key in a hello, or nil if it is not a version-1 hello.
    public static func parseHello(_ frame: [UInt8]) -> [UInt8]? {
        guard frame.count == helloBytes, Array(frame[0..<3]) == RelayProtocol.magic,
              frame[3] == RelayProtocol.version else { return nil }
        return Array(frame[4...])
    }

    public static func transcript(relayStatic: [UInt8], clientEphemeral: [UInt8], relayEphemeral: [UInt8]) -> [UInt8] {
        Hash.blake2b(RelayProtocol.transcriptLabel + relayStatic + clientEphemeral + relayEphemeral)
    }

    /// What the client signs to prove its mailbox key on this very connection.
    public static func authMessage(transcript: [UInt8], challenge: [UInt8]) -> [UInt8] {
        RelayProtocol.authLabel + transcript + challenge
    }

    static func keys(es: SecretBytes, ee: SecretBytes, transcript: [UInt8]) -> (c2s: SecretBytes, s2c: SecretBytes) {
        var material = es.exposedCopy() + ee.exposedCopy()
        let ikm = SecretBytes(consuming: &material)
        return (Hash.deriveKey(from: ikm, context: "rchat relay c2s", transcript),
                Hash.deriveKey(from: ikm, context: "rchat relay s2c", transcript))
    }

    /// Client side: after sending `hello(ephemeral.publicKey)` and receiving the relay's hello.
    public static func clientCipher(ephemeral: AgreementKey, relayStatic: [UInt8], relayHello: [UInt8]) throws(CryptoError) -> (TransportCipher, transcript: [UInt8]) {
        guard let relayEphemeral = parseHello(relayHello) else { throw .malformed("relay hello") }
        let es = try ephemeral.sharedSecret(with: relayStatic)
        let ee = try ephemeral.sharedSecret(with: relayEphemeral)
        let h = transcript(relayStatic: relayStatic, clientEphemeral: ephemeral.publicKey, relayEphemeral: relayEphemeral)
        let k = keys(es: es, ee: ee, transcript: h)
        return (TransportCipher(sendKey: k.c2s, receiveKey: k.s2c,
                                sendDirection: TransportCipher.clientToRelay, receiveDirection: TransportCipher.relayToClient), h)
    }

    /// Relay side: from the client's hello, a fresh ephemeral, the reply and the cipher.
    public static func relayRespond(clientHello: [UInt8], relayStatic: AgreementKey) throws(CryptoError) -> (reply: [UInt8], cipher: TransportCipher, transcript: [UInt8]) {
        guard let clientEphemeral = parseHello(clientHello) else { throw .malformed("client hello") }
        let ephemeral = AgreementKey.generate()
        let es = try relayStatic.sharedSecret(with: clientEphemeral)
        let ee = try ephemeral.sharedSecret(with: clientEphemeral)
        let h = transcript(relayStatic: relayStatic.publicKey, clientEphemeral: clientEphemeral, relayEphemeral: ephemeral.publicKey)
        let k = keys(es: es, ee: ee, transcript: h)
        return (hello(ephemeral: ephemeral.publicKey),
                TransportCipher(sendKey: k.s2c, receiveKey: k.c2s,
                                sendDirection: TransportCipher.relayToClient, receiveDirection: TransportCipher.clientToRelay), h)
    }
}
