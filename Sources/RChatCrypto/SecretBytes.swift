@preconcurrency import CSodium

/// Secret key material that is wiped (sodium_memzero) when released. It lives in its own
/// allocation, never in a copy-on-write array, so no stray copy outlives it; `withBytes`
/// lends it out for the length of one call.
///
/// `@unchecked Sendable`: Swift never calls a pointer Sendable, but the bytes behind this
/// one are written only in `init` and wiped only in `deinit`; in between every thread only
/// reads them.
public final class SecretBytes: @unchecked Sendable {
    private let pointer: UnsafeMutableRawBufferPointer

    public var count: Int { pointer.count }

    public init(count: Int) {
        Sodium.ensureInitialized()
        pointer = .allocate(byteCount: max(count, 1), alignment: 16)
        sodium_memzero(pointer.baseAddress!, pointer.count)
        if count == 0 { fatalError("empty secret") }
    }

    /// Copies `bytes` in and wipes the caller's array buffer (it should not be used again).
    public convenience init(consuming bytes: inout [UInt8]) {
        self.init(count: bytes.count)
        bytes.withUnsafeMutableBytes { src in
            pointer.copyMemory(from: UnsafeRawBufferPointer(src))
            sodium_memzero(src.baseAddress!, src.count)
        }
        bytes = []
    }

    /// Fills a fresh secret by a libsodium call that writes into it.
    public convenience init(count: Int, fill: (UnsafeMutablePointer<UInt8>) throws -> Void) rethrows {
        self.init(count: count)
        try fill(pointer.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    public func withBytes<R>(_ body: (UnsafePointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafePointer(pointer.baseAddress!.assumingMemoryBound(to: UInt8.self)))
    }

    /// A copy as an array — only for writing the secret to its own 0600 file or an export.
    /// The caller wipes it (`wipe(&array)`).
    public func exposedCopy() -> [UInt8] {
        Array(UnsafeRawBufferPointer(pointer))
    }

    /// Whether `other` holds the same bytes (constant time).
    public func sameBytes(as other: SecretBytes) -> Bool {
        guard count == other.count else { return false }
        return withBytes { a in other.withBytes { b in sodium_memcmp(a, b, count) == 0 } }
    }

    /// The first `n` bytes as a new secret (e.g. the seed of an Ed25519 secret key).
    public func prefix(_ n: Int) -> SecretBytes {
        SecretBytes(count: n) { dst in withBytes { dst.update(from: $0, count: n) } }
    }

    deinit {
        sodium_memzero(pointer.baseAddress!, pointer.count)
        pointer.deallocate()
    }
}

/// Wipes an array that held secret material.
public func wipe(_ bytes: inout [UInt8]) {
    if !bytes.isEmpty { bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress!, $0.count) } }
    bytes = []
}
