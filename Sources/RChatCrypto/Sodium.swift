@preconcurrency import CSodium
import RChatCore

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

/// Seeded randomness for the deterministic simulation (docs/ARCHITECTURE.md): on a thread
/// that called `seed`, every random byte libsodium draws — keys, nonces, challenges, message
/// ids — follows from the seed, so the same seed gives the same run. Other threads, and any
/// process that never calls `install`, draw from libsodium's generator as always.
public enum SeededRandomness {
    private static let installed: Bool = rchat_random_install() == 0

    /// Routes libsodium's draws through the seedable generator (once per process).
    public static func install() {
        precondition(installed, "cannot install the seedable generator")
        Sodium.ensureInitialized()
    }

    /// From now on this thread's draws follow `seed`.
    public static func seed(_ seed: UInt64) {
        install()
        var bytes = seed.littleEndian
        withUnsafeBytes(of: &bytes) { rchat_random_seed($0.bindMemory(to: UInt8.self).baseAddress, 8, 1) }
    }

    /// This thread draws from libsodium's generator again.
    public static func unseed() {
        var none: UInt8 = 0
        rchat_random_seed(&none, 0, 0)
    }
}

/// Swift's random number interface over libsodium's generator (seeded in the simulation).
public struct SodiumRandomNumberGenerator: RandomNumberGenerator {
    public init() { Sodium.ensureInitialized() }

    public mutating func next() -> UInt64 {
        var value: UInt64 = 0
        withUnsafeMutableBytes(of: &value) { randombytes_buf($0.baseAddress!, 8) }
        return value
    }
}

extension MessageID {
    /// A new id made at the clock's time, its random bits from libsodium (so the simulation
    /// can seed them).
    public static func fresh(_ clock: Clock) -> MessageID {
        var generator = SodiumRandomNumberGenerator()
        return make(milliseconds: UInt64(max(0, clock.nowMilliseconds())), using: &generator)
    }
}
