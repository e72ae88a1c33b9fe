@preconcurrency import CSodium

/// Anonymous public-key encryption (crypto_box_seal) to an X25519 key: a message request
/// to someone whose code we hold, readable only with their account key. Who sent it is
/// proven inside, by a signature, not by the box.
public enum SealedBox {
    /// What sealing adds: an ephemeral public key and a tag.
    public static let overheadBytes = 48
    public static func seal(_ plaintext: [UInt8], to recipient: [UInt8]) throws(CryptoError) -> [UInt8] {
        Sodium.ensureInitialized()
        guard recipient.count == AgreementKey.keyBytes else { throw .badKeyLength(expected: AgreementKey.keyBytes, got: recipient.count) }
        var out = [UInt8](repeating: 0, count: plaintext.count + Int(crypto_box_sealbytes()))
        let rc = out.withUnsafeMutableBufferPointer { o in
            plaintext.withUnsafeBufferPointer { p in
                recipient.withUnsafeBufferPointer { r in
                    crypto_box_seal(o.baseAddress!, p.baseAddress ?? UnsafePointer(bitPattern: 1)!, UInt64(p.count), r.baseAddress!)
                }
            }
        }
        guard rc == 0 else { throw .malformed("recipient key") }
        return out
    }

    public static func open(_ box: [UInt8], with key: AgreementKey) throws(CryptoError) -> [UInt8] {
        Sodium.ensureInitialized()
        let overhead = Int(crypto_box_sealbytes())
        guard box.count >= overhead else { throw .decryptionFailed }
        var out = [UInt8](repeating: 0, count: box.count - overhead)
        let rc = key.secretKey.withBytes { sk in
            out.withUnsafeMutableBufferPointer { o in
                box.withUnsafeBufferPointer { b in
                    key.publicKey.withUnsafeBufferPointer { pk in
                        crypto_box_seal_open(o.baseAddress ?? UnsafeMutablePointer(bitPattern: 1)!, b.baseAddress!, UInt64(b.count), pk.baseAddress!, sk)
                    }
                }
            }
        }
        guard rc == 0 else { throw .decryptionFailed }
        return out
    }
}
