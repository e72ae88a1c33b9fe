@preconcurrency import CSodium

/// An X25519 key pair for Diffie–Hellman: ephemeral handshake keys, the relay's static key,
/// and the agreement form of account keys.
public struct AgreementKey: Sendable {
    public static let keyBytes = 32

    public let secretKey: SecretBytes
    public let publicKey: [UInt8]

    public static func generate() -> AgreementKey {
        AgreementKey(secretKey: SecretBytes(count: keyBytes) { randombytes_buf($0, keyBytes) })
    }

    public init(secretKey: SecretBytes) {
        Sodium.ensureInitialized()
        precondition(secretKey.count == Self.keyBytes)
        self.secretKey = secretKey
        var pk = [UInt8](repeating: 0, count: Self.keyBytes)
        secretKey.withBytes { sk in _ = pk.withUnsafeMutableBufferPointer { crypto_scalarmult_base($0.baseAddress!, sk) } }
        publicKey = pk
    }

    /// A key pair whose public half is already known (`SigningKey.agreementKey`).
    init(secretKey: SecretBytes, publicKey: [UInt8]) {
        precondition(secretKey.count == Self.keyBytes && publicKey.count == Self.keyBytes)
        self.secretKey = secretKey
        self.publicKey = publicKey
    }

    /// X25519(secret, peer). Throws for a low-order peer key (an all-zero result), which
    /// would make the "shared" secret known to anyone.
    public func sharedSecret(with peerPublicKey: [UInt8]) throws(CryptoError) -> SecretBytes {
        guard peerPublicKey.count == Self.keyBytes else { throw .badKeyLength(expected: Self.keyBytes, got: peerPublicKey.count) }
        var rc: Int32 = 0
        let out = SecretBytes(count: Self.keyBytes) { out in
            secretKey.withBytes { sk in
                rc = peerPublicKey.withUnsafeBufferPointer { crypto_scalarmult(out, sk, $0.baseAddress!) }
            }
        }
        guard rc == 0 else { throw .verificationFailed }
        return out
    }
}
