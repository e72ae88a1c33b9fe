/// A byte FIFO over one contiguous array: appended at the back, consumed from the front.
/// Consumed space is reclaimed in bulk, so a stream of small frames costs no per-frame moves.
public struct ByteQueue: Sendable {
    public private(set) var storage: [UInt8] = []
    public private(set) var start = 0

    public init() {}

    public var count: Int { storage.count - start }
    public var isEmpty: Bool { storage.count == start }

    public mutating func append<C: Collection>(contentsOf bytes: C) where C.Element == UInt8 {
        storage.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        storage.append(contentsOf: bytes)
    }

    public mutating func appendU32(_ v: UInt32) {
        storage.append(UInt8(truncatingIfNeeded: v >> 24))
        storage.append(UInt8(truncatingIfNeeded: v >> 16))
        storage.append(UInt8(truncatingIfNeeded: v >> 8))
        storage.append(UInt8(truncatingIfNeeded: v))
    }

    /// Drops `n` bytes from the front.
    public mutating func consume(_ n: Int) {
        precondition(n <= count)
        start += n
        if start == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= 1 << 20)
            start = 0
        } else if start >= 1 << 16, start * 2 >= storage.count {
            storage.removeSubrange(0..<start)
            start = 0
        }
    }

    /// Reads up to `length` bytes at `offset` from the front as a big-endian u32.
    public func u32(at offset: Int) -> UInt32 {
        let i = start + offset
        return UInt32(storage[i]) << 24 | UInt32(storage[i + 1]) << 16 | UInt32(storage[i + 2]) << 8 | UInt32(storage[i + 3])
    }

    public func bytes(at offset: Int, count n: Int) -> [UInt8] {
        Array(storage[(start + offset)..<(start + offset + n)])
    }

    public func withUnreadBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
    }

    public mutating func removeAll() {
        storage = []
        start = 0
    }
}
