/// Which of an attachment's chunks are done (taken by the relay, for a file being sent;
/// stored here, for a file being received): one bit per chunk, chunk i in bit (i mod 8) of
/// byte i / 8. These bytes are what the store keeps (`attachments.chunks`).
public struct ChunkSet: Equatable, Sendable {
    public let count: Int
    public private(set) var bits: [UInt8]
    public private(set) var doneCount: Int

    public init(count: Int) {
        precondition(count >= 1)
        self.count = count
        bits = [UInt8](repeating: 0, count: (count + 7) / 8)
        doneCount = 0
    }

    /// The stored bytes; nil when they do not fit `count` (a damaged row).
    public init?(count: Int, bits: [UInt8]) {
        guard count >= 1, bits.count == (count + 7) / 8 else { return nil }
        // Bits past the last chunk must be clear.
        if count % 8 != 0, bits[bits.count - 1] >> UInt8(count % 8) != 0 { return nil }
        self.count = count
        self.bits = bits
        doneCount = bits.reduce(0) { $0 + $1.nonzeroBitCount }
    }

    public func contains(_ index: Int) -> Bool {
        index >= 0 && index < count && bits[index / 8] & (1 << UInt8(index % 8)) != 0
    }

    /// Marks chunk `index` done; false when it was already, or is out of range.
    @discardableResult
    public mutating func insert(_ index: Int) -> Bool {
        guard index >= 0, index < count, !contains(index) else { return false }
        bits[index / 8] |= 1 << UInt8(index % 8)
        doneCount += 1
        return true
    }

    public var isComplete: Bool { doneCount == count }

    /// The chunks not done, in order, at most `limit` of them.
    public func missing(limit: Int = .max) -> [Int] {
        var out: [Int] = []
        var i = 0
        while i < count && out.count < limit {
            if bits[i / 8] == 0xFF && i % 8 == 0 && i + 8 <= count { i += 8; continue }
            if !contains(i) { out.append(i) }
            i += 1
        }
        return out
    }
}
