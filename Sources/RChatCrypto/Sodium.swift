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

    public var description: String {
        switch self {
        case .badKeyLength(let e, let g): return "key has \(g) bytes, expected \(e)"
        case .verificationFailed: return "signature does not verify"
        case .decryptionFailed: return "could not decrypt: wrong key or altered data"
        case .malformed(let what): return "malformed \(what)"
        case .outOfMemory: return "out of memory for key derivation"
        }
    }
}

/// Constant-time comparison for secrets and tags.
public func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in sodium_memcmp(pa.baseAddress!, pb.baseAddress!, a.count) == 0 } }
}
