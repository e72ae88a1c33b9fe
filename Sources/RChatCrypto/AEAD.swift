@preconcurrency import CSodium

/// XChaCha20-Poly1305 (IETF): authenticated encryption with a 24-byte nonce, random nonces
/// being safe at this size.
public enum AEAD {
    public static let keyBytes = 32
    public static let nonceBytes = 24
    public static let tagBytes = 16

    public static func seal(_ plaintext: [UInt8], additionalData: [UInt8] = [], nonce: [UInt8], key: SecretBytes) -> [UInt8] {
        Sodium.ensureInitialized()
        precondition(nonce.count == nonceBytes && key.count == keyBytes)
        var out = [UInt8](repeating: 0, count: plaintext.count + tagBytes)
        var outLen: UInt64 = 0
        key.withBytes { k in
            out.withUnsafeMutableBufferPointer { o in
                plaintext.withUnsafeBufferPointer { p in
                    additionalData.withUnsafeBufferPointer { a in
                        nonce.withUnsafeBufferPointer { n in
                            _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                                o.baseAddress!, &outLen, p.baseAddress, UInt64(p.count),
                                a.baseAddress, UInt64(a.count), nil, n.baseAddress!, k)
                        }
                    }
                }
            }
        }
        return out
    }

    public static func open(_ ciphertext: [UInt8], additionalData: [UInt8] = [], nonce: [UInt8], key: SecretBytes) throws(CryptoError) -> [UInt8] {
        try open(ciphertext[...], additionalData: additionalData[...], nonce: nonce[...], key: key)
    }

    /// The same over slices, so a box inside a larger frame opens without being copied out
    /// (the relay reader opens three boxes per delivery).
    public static func open(_ ciphertext: ArraySlice<UInt8>, additionalData: ArraySlice<UInt8>, nonce: ArraySlice<UInt8>,
                            key: SecretBytes) throws(CryptoError) -> [UInt8] {
        guard nonce.count == nonceBytes else { throw .decryptionFailed }
        return try nonce.withUnsafeBufferPointer { n throws(CryptoError) in
            try open(ciphertext, additionalData: additionalData, nonce: n.baseAddress!, key: key)
        }
    }

    /// Opens a box sealed under `counterNonce(counter, direction:)`, the nonce made on the stack.
    public static func open(_ ciphertext: ArraySlice<UInt8>, additionalData: ArraySlice<UInt8> = [], counter: UInt64, direction: UInt8,
                            key: SecretBytes) throws(CryptoError) -> [UInt8] {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: nonceBytes) { n throws(CryptoError) in
            writeCounterNonce(counter, direction: direction, into: n)
            return try open(ciphertext, additionalData: additionalData, nonce: UnsafePointer(n.baseAddress!), key: key)
        }
    }

    private static func open(_ ciphertext: ArraySlice<UInt8>, additionalData: ArraySlice<UInt8>, nonce: UnsafePointer<UInt8>,
                             key: SecretBytes) throws(CryptoError) -> [UInt8] {
        Sodium.ensureInitialized()
        guard key.count == keyBytes, ciphertext.count >= tagBytes else { throw .decryptionFailed }
        var rc: Int32 = -1
        let out = [UInt8](unsafeUninitializedCapacity: ciphertext.count - tagBytes) { o, count in
            var outLen: UInt64 = 0
            rc = key.withBytes { k in
                ciphertext.withUnsafeBufferPointer { c in
                    additionalData.withUnsafeBufferPointer { a in
                        crypto_aead_xchacha20poly1305_ietf_decrypt(
                            o.baseAddress ?? UnsafeMutablePointer(bitPattern: 1)!, &outLen, nil, c.baseAddress!, UInt64(c.count),
                            a.baseAddress, UInt64(a.count), nonce, k)
                    }
                }
            }
            count = rc == 0 ? Int(outLen) : 0
        }
        guard rc == 0 else { throw .decryptionFailed }
        return out
    }

    /// Seal with a fresh random nonce, written in front: the form for data at rest.
    public static func sealWithRandomNonce(_ plaintext: [UInt8], additionalData: [UInt8] = [], key: SecretBytes) -> [UInt8] {
        let nonce = Random.bytes(nonceBytes)
        return nonce + seal(plaintext, additionalData: additionalData, nonce: nonce, key: key)
    }

    public static func openWithNonceInFront(_ box: [UInt8], additionalData: [UInt8] = [], key: SecretBytes) throws(CryptoError) -> [UInt8] {
        try openWithNonceInFront(box[...], additionalData: additionalData, key: key)
    }

    public static func openWithNonceInFront(_ box: ArraySlice<UInt8>, additionalData: [UInt8] = [], key: SecretBytes) throws(CryptoError) -> [UInt8] {
        guard box.count >= nonceBytes + tagBytes else { throw .decryptionFailed }
        let start = box.startIndex
        return try open(box[(start + nonceBytes)...], additionalData: additionalData[...], nonce: box[start..<(start + nonceBytes)], key: key)
    }

    /// A 24-byte nonce from a counter: for channels where each side numbers its frames, so a
    /// replayed or reordered frame fails to open.
    public static func counterNonce(_ counter: UInt64, direction: UInt8) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: nonceBytes) { n, count in
            writeCounterNonce(counter, direction: direction, into: n)
            count = nonceBytes
        }
    }

    private static func writeCounterNonce(_ counter: UInt64, direction: UInt8, into n: UnsafeMutableBufferPointer<UInt8>) {
        n.initialize(repeating: 0)
        n[0] = direction
        for i in 0..<8 { n[16 + i] = UInt8(truncatingIfNeeded: counter >> UInt64(56 - 8 * i)) }
    }
}
