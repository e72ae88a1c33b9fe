@preconcurrency import CSodium
import RChatCore

/// Seals data under a passphrase (Argon2id via crypto_pwhash, then XChaCha20-Poly1305):
/// the account export.
///
/// Layout: magic `RCHATEXP1` (9 bytes) ‖ salt (16) ‖ opslimit (u64, big-endian) ‖ memlimit
/// (u64, big-endian, bytes) ‖ nonce (24) ‖ box. The magic fixes the algorithm (Argon2id
/// v1.3); everything before the nonce is the box's additional data, so a changed cost or
/// salt fails to open. A file's costs are checked against `Cost.accepted` before anything
/// is derived: a hostile file cannot make us spend 4 GiB or an hour on its key.
public enum PassphraseSeal {
    static let magic = Array("RCHATEXP1".utf8)

    public struct Cost: Sendable, Equatable {
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
        /// libsodium's "sensitive" cost: the most an export may ask for (1 GiB).
        public static var sensitive: Cost {
            Cost(opsLimit: UInt64(crypto_pwhash_opslimit_sensitive()), memLimit: UInt64(crypto_pwhash_memlimit_sensitive()))
        }

        /// What `open` derives a key with: each limit from libsodium's interactive to its
        /// sensitive value (opslimit 2 to 4, memlimit 64 MiB to 1 GiB). Below is too weak to
        /// have been written by rChat, above is a file trying to exhaust the machine.
        public var isAccepted: Bool {
            (Self.interactive.opsLimit...Self.sensitive.opsLimit).contains(opsLimit)
                && (Self.interactive.memLimit...Self.sensitive.memLimit).contains(memLimit)
        }
    }

    /// What a sealed file says before its box: checked without deriving anything.
    public struct Header: Sendable {
        public let salt: [UInt8]
        public let cost: Cost
        /// The header's bytes: the box's additional data.
        let length: Int

        /// Throws `.malformed` for something that is not an export, `.unacceptableCost` for
        /// costs outside `Cost.isAccepted`.
        public init(parsing sealed: [UInt8]) throws(CryptoError) {
            var r = ByteReader(sealed)
            guard let m = try? r.raw(magic.count), m == magic,
                  let salt = try? r.raw(Int(crypto_pwhash_saltbytes())), let ops = try? r.u64(), let mem = try? r.u64()
            else { throw .malformed("account export") }
            let cost = Cost(opsLimit: ops, memLimit: mem)
            guard cost.isAccepted else { throw .unacceptableCost(opsLimit: ops, memLimit: mem) }
            self.salt = salt
            self.cost = cost
            length = r.offset
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
        return header.bytes + AEAD.sealWithRandomNonce(plaintext, additionalData: header.bytes, key: key)
    }

    /// Throws `.decryptionFailed` for a wrong passphrase or altered file, `.malformed` for
    /// something that is not an export at all, `.unacceptableCost` (before deriving
    /// anything) for a file asking for a cost outside `Cost.isAccepted`.
    public static func open(_ sealed: [UInt8], passphrase: String) throws(CryptoError) -> [UInt8] {
        Sodium.ensureInitialized()
        let header = try Header(parsing: sealed)
        let key = try deriveKey(passphrase: passphrase, salt: header.salt, cost: header.cost)
        return try AEAD.openWithNonceInFront(Array(sealed[header.length...]), additionalData: Array(sealed[..<header.length]), key: key)
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
