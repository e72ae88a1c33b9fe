/// Which of an attachment's chunks are done (taken by the relay, for a file being sent;
/// stored here, for a file being received), as ranges (`ChunkRanges`): what the store keeps
/// (`attachments.chunks`) grows with the gaps, not with the chunks a file claims.
public struct ChunkSet: Equatable, Sendable {
    public let count: Int
    public private(set) var done: ChunkRanges

    public init(count: Int) {
        precondition(count >= 1)
        self.count = count
        done = ChunkRanges()
    }

    /// The stored bytes (`ChunkRanges.encoded`); nil when they do not fit `count` (a
    /// damaged row).
    public init?(count: Int, encoded: [UInt8]) {
        guard count >= 1, let done = ChunkRanges(encoded: encoded), (done.ranges.last?.upperBound ?? 0) <= count else { return nil }
        self.count = count
        self.done = done
    }

    /// A bitmap as stores before schema version 14 kept it: chunk i in bit (i mod 8) of
    /// byte i / 8. nil when it does not fit `count`.
    public init?(count: Int, bitmap: [UInt8]) {
        guard count >= 1, bitmap.count == (count + 7) / 8 else { return nil }
        if count % 8 != 0, bitmap[bitmap.count - 1] >> UInt8(count % 8) != 0 { return nil }
        self.init(count: count)
        for (byte, bits) in bitmap.enumerated() where bits != 0 {
            for bit in 0..<8 where bits & (1 << UInt8(bit)) != 0 { done.insert(byte * 8 + bit) }
        }
    }

    public var encoded: [UInt8] { done.encoded }
    public var doneCount: Int { done.count }
    public var isComplete: Bool { done.count == count }

    public func contains(_ index: Int) -> Bool { index >= 0 && index < count && done.contains(index) }

    /// Marks chunk `index` done; false when it was already, or is out of range.
    @discardableResult
    public mutating func insert(_ index: Int) -> Bool {
        guard index >= 0, index < count else { return false }
        return done.insert(index)
    }

    /// The chunks not done, in order, at most `limit` of them.
    public func missing(limit: Int = .max) -> [Int] {
        var out: [Int] = []
        for gap in done.missing(in: 0..<count) {
            for index in gap {
                guard out.count < limit else { return out }
                out.append(index)
            }
        }
        return out
    }
}
