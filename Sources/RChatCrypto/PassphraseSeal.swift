@preconcurrency import CSodium
import RChatCore

/// Seals data under a passphrase (Argon2id via crypto_pwhash, then XChaCha20-Poly1305):
/// the account export. Layout: magic ‖ salt ‖ opslimit ‖ memlimit ‖ nonce ‖ box.
public enum PassphraseSeal {
    static let magic = Array("RCHATEXP1".utf8)

    public struct Cost: Sendable {
        public let opsLimit: UInt64
        public let memLimit: UInt64
        /// libsodium's "interactive" cost: about a tenth of a second, 64 MiB.
        public static var interactive: Cost {
            Cost(opsLimit: UInt64(crypto_pwhash_opslimit_interactive()), memLimit: UInt64(crypto_pwhash_memlimit_interactive()))
        }
        /// libsodium's "moderate" cost, for files that leave the machine.
        public static var moderate: Cost {
            Cost(opsLimit: UInt64(crypto_pwhash_opslimit_moderate()), memLimit: UInt64(crypto_pwhash_memlimit_moderate()))
        }
    }

    public static func seal(_ plaintext: [UInt8], passphrase: String, cost: Cost = .moderate) throws(CryptoError) -> [UInt8] {
        Sodium.ensureInitialized()
        let salt = Random.bytes(Int(crypto_pwhash_saltbytes()))
        let key = try deriveKey(passphrase: passphrase, salt: salt, cost: cost)
        var header = ByteWriter(capacity: 64)
        header.raw(magic)
        header.raw(salt)
        header.u64(cost.opsLimit)
        header.u64(cost.memLimit)
        // The header is authenticated, so a changed cost or salt fails to open.
        return header.bytes + AEAD.sealWithRandomNonce(plaintext, additionalData: header.bytes, key: key)
    }

    /// Throws `.decryptionFailed` for a wrong passphrase or altered file, `.malformed` for
    /// something that is not an export at all.
    public static func open(_ sealed: [UInt8], passphrase: String) throws(CryptoError) -> [UInt8] {
        Sodium.ensureInitialized()
        var r = ByteReader(sealed)
        let saltBytes = Int(crypto_pwhash_saltbytes())
        guard let m = try? r.raw(magic.count), m == magic,
              let salt = try? r.raw(saltBytes), let ops = try? r.u64(), let mem = try? r.u64()
        else { throw .malformed("account export") }
        // Refuse absurd costs from a hostile file instead of trying to allocate them.
        guard ops >= UInt64(crypto_pwhash_opslimit_min()), ops <= 64,
              mem >= UInt64(crypto_pwhash_memlimit_min()), mem <= 4 << 30
        else { throw .malformed("account export") }
        let headerLength = r.offset
        let key = try deriveKey(passphrase: passphrase, salt: salt, cost: Cost(opsLimit: ops, memLimit: mem))
        return try AEAD.openWithNonceInFront(r.rest(), additionalData: Array(sealed[..<headerLength]), key: key)
    }

    static func deriveKey(passphrase: String, salt: [UInt8], cost: Cost) throws(CryptoError) -> SecretBytes {
        // A trailing zero keeps the buffer non-empty; it is not part of the passphrase.
        var pw = Array(passphrase.utf8) + [0]
        defer { wipe(&pw) }
        var rc: Int32 = 0
        let key = SecretBytes(count: AEAD.keyBytes) { out in
            rc = pw.withUnsafeBufferPointer { p in
                salt.withUnsafeBufferPointer { s in
                    p.withMemoryRebound(to: CChar.self) { pc in
                        crypto_pwhash(out, UInt64(AEAD.keyBytes), pc.baseAddress!, UInt64(pc.count - 1), s.baseAddress!,
                                      cost.opsLimit, Int(cost.memLimit), crypto_pwhash_alg_argon2id13())
                    }
                }
            }
        }
        guard rc == 0 else { throw .outOfMemory }
        return key
    }
}
