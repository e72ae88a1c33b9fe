@preconcurrency import CSodium
import Synchronization

/// An Ed25519 key pair: account keys, device keys, mailbox keys.
public struct SigningKey: Sendable {
    public static let publicKeyBytes = 32
    public static let seedBytes = 32
    public static let signatureBytes = 64

    public let publicKey: [UInt8]
    /// libsodium's 64-byte secret key (seed ‖ public key).
    public let secretKey: SecretBytes

    public static func generate() -> SigningKey {
        Sodium.ensureInitialized()
        var pk = [UInt8](repeating: 0, count: publicKeyBytes)
        let sk = SecretBytes(count: Int(crypto_sign_secretkeybytes())) { sk in
            _ = pk.withUnsafeMutableBufferPointer { crypto_sign_keypair($0.baseAddress!, sk) }
        }
        return SigningKey(publicKey: pk, secretKey: sk)
    }

    /// The key pair a 32-byte seed determines (RFC 8032's "secret key").
    public init(seed: SecretBytes) throws(CryptoError) {
        Sodium.ensureInitialized()
        guard seed.count == Self.seedBytes else { throw .badKeyLength(expected: Self.seedBytes, got: seed.count) }
        var pk = [UInt8](repeating: 0, count: Self.publicKeyBytes)
        let sk = SecretBytes(count: Int(crypto_sign_secretkeybytes())) { sk in
            seed.withBytes { s in _ = pk.withUnsafeMutableBufferPointer { crypto_sign_seed_keypair($0.baseAddress!, sk, s) } }
        }
        self.init(publicKey: pk, secretKey: sk)
    }

    private init(publicKey: [UInt8], secretKey: SecretBytes) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// The 32-byte seed, which is all that needs storing.
    public var seed: SecretBytes { secretKey.prefix(Self.seedBytes) }

    public func sign(_ message: [UInt8]) -> [UInt8] {
        var sig = [UInt8](repeating: 0, count: Self.signatureBytes)
        secretKey.withBytes { sk in
            _ = sig.withUnsafeMutableBufferPointer { s in
                message.withUnsafeBufferPointer { m in
                    crypto_sign_detached(s.baseAddress!, nil, m.baseAddress ?? UnsafePointer(bitPattern: 1)!, UInt64(m.count), sk)
                }
            }
        }
        return sig
    }

    /// The X25519 form of this key, for Diffie–Hellman with the same identity.
    /// (Its public half is the one `Signature.agreementPublicKey(fromSigningKey:)` gives for
    /// `publicKey`, so both share `AgreementPublicKeys`: a key's is computed once a process.)
    public func agreementKey() -> AgreementKey {
        let sk = SecretBytes(count: AgreementKey.keyBytes) { out in
            secretKey.withBytes { _ = crypto_sign_ed25519_sk_to_curve25519(out, $0) }
        }
        if let known = AgreementPublicKeys.shared.lookUp(publicKey) { return AgreementKey(secretKey: sk, publicKey: known) }
        let key = AgreementKey(secretKey: sk)
        AgreementPublicKeys.shared.remember(key.publicKey, for: publicKey)
        return key
    }
}

public enum Signature {
    public static func verify(_ signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        Sodium.ensureInitialized()
        guard signature.count == SigningKey.signatureBytes, publicKey.count == SigningKey.publicKeyBytes else { return false }
        return signature.withUnsafeBufferPointer { s in
            message.withUnsafeBufferPointer { m in
                publicKey.withUnsafeBufferPointer { p in
                    crypto_sign_verify_detached(s.baseAddress!, m.baseAddress ?? UnsafePointer(bitPattern: 1)!, UInt64(m.count), p.baseAddress!) == 0
                }
            }
        }
    }

    /// The X25519 public form of an Ed25519 public key; nil for a key that is not a valid point.
    public static func agreementPublicKey(fromSigningKey publicKey: [UInt8]) -> [UInt8]? {
        Sodium.ensureInitialized()
        guard publicKey.count == SigningKey.publicKeyBytes else { return nil }
        if let known = AgreementPublicKeys.shared.lookUp(publicKey) { return known }
        var out = [UInt8](repeating: 0, count: AgreementKey.keyBytes)
        let rc = out.withUnsafeMutableBufferPointer { o in
            publicKey.withUnsafeBufferPointer { crypto_sign_ed25519_pk_to_curve25519(o.baseAddress!, $0.baseAddress!) }
        }
        guard rc == 0 else { return nil }
        AgreementPublicKeys.shared.remember(out, for: publicKey)
        return out
    }
}

/// The X25519 public key of each Ed25519 public key met in this process. Converting one
/// costs a point decompression (about half of an X25519 operation), and every handshake,
/// conversation secret and engine start converts the same few account keys again: a
/// handshake's share of it was a tenth of the simulation's time. Public values only, and a
/// pure function of the key, so remembering cannot change a result.
enum AgreementPublicKeys {
    static let shared = RememberedResults<[UInt8], [UInt8]>()
}

/// Results of a pure function of public bytes, remembered per process (`AgreementPublicKeys`,
/// `DeviceCertificate.verify`). Bounded: emptied when full — a process meets a few keys, and a
/// hostile stream of new ones costs what it did without it.
final class RememberedResults<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    static var capacity: Int { 4096 }
    private let known = Mutex<[Key: Value]>([:])

    func lookUp(_ key: Key) -> Value? {
        known.withLock { $0[key] }
    }

    func remember(_ value: Value, for key: Key) {
        known.withLock { table in
            if table.count >= Self.capacity { table.removeAll(keepingCapacity: true) }
            table[key] = value
        }
    }

    var count: Int { known.withLock { $0.count } }
}
