@preconcurrency import CSodium
import RChatCore

/// BLAKE2b (crypto_generichash), plain or keyed: rendezvous codes, fingerprints, key
/// derivation with a context.
public enum Hash {
    public static func blake2b(_ message: [UInt8], key: SecretBytes? = nil, outputBytes: Int = 32) -> [UInt8] {
        Sodium.ensureInitialized()
        precondition(outputBytes >= Int(crypto_generichash_bytes_min()) && outputBytes <= Int(crypto_generichash_bytes_max()))
        var out = [UInt8](repeating: 0, count: outputBytes)
        out.withUnsafeMutableBufferPointer { o in
            message.withUnsafeBufferPointer { m in
                if let key {
                    key.withBytes { k in
                        _ = crypto_generichash(o.baseAddress!, outputBytes, m.baseAddress, UInt64(m.count), k, key.count)
                    }
                } else {
                    _ = crypto_generichash(o.baseAddress!, outputBytes, m.baseAddress, UInt64(m.count), nil, 0)
                }
            }
        }
        return out
    }

    /// A secret derived from `key` for one purpose: keyed BLAKE2b over a context label and
    /// its inputs, so keys for different purposes never coincide.
    public static func deriveKey(from key: SecretBytes, context: String, _ parts: [UInt8]...) -> SecretBytes {
        // Length-prefixed, so that ("ab","c") and ("a","bc") derive different keys.
        var message = ByteWriter()
        message.long(Array(context.utf8))
        for p in parts { message.long(p) }
        var derived = blake2b(message.bytes, key: key, outputBytes: 32)
        return SecretBytes(consuming: &derived)
    }
}
