@preconcurrency import CSodium

/// libsodium must be initialised once before use; every entry point here calls this.
public enum Sodium {
    private static let initialized: Bool = sodium_init() >= 0

    public static func ensureInitialized() {
        precondition(initialized, "libsodium failed to initialise")
    }
}

/// Cryptographically secure random bytes.
public enum Random {
    public static func bytes(_ count: Int) -> [UInt8] {
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return out
    }
}

/// Errors a caller can act on; never carries key material.
public enum CryptoError: Error, Equatable, CustomStringConvertible {
    case badKeyLength(expected: Int, got: Int)
    case verificationFailed
    case decryptionFailed
    case malformed(String)
    case outOfMemory
    /// A passphrase-sealed file asks for a key-derivation cost outside the accepted range.
    case unacceptableCost(opsLimit: UInt64, memLimit: UInt64)

    public var description: String {
        switch self {
        case .badKeyLength(let e, let g): return "key has \(g) bytes, expected \(e)"
        case .verificationFailed: return "signature does not verify"
        case .decryptionFailed: return "could not decrypt: wrong key or altered data"
        case .malformed(let what): return "malformed \(what)"
        case .outOfMemory: return "out of memory for key derivation"
        case .unacceptableCost(let ops, let mem):
            let low = PassphraseSeal.Cost.interactive, high = PassphraseSeal.Cost.sensitive
            return "key-derivation cost out of range (opslimit \(ops), memlimit \(mem) bytes; accepted: opslimit \(low.opsLimit) to "
                + "\(high.opsLimit), memlimit \(low.memLimit >> 20) to \(high.memLimit >> 20) MiB)"
        }
    }
}

/// Constant-time comparison for secrets and tags.
public func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in sodium_memcmp(pa.baseAddress!, pb.baseAddress!, a.count) == 0 } }
}
