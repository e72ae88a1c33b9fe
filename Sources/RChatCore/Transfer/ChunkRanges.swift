/// A set of chunk indices kept as sorted, merged, half-open ranges: storage grows with the
/// number of gaps, never with how many chunks a file claims to have, and each insert costs
/// a binary search (plus moving the ranges after it when it opens a new one).
///
/// Invariant: `ranges` is sorted, every range is non-empty and starts at 0 or later, and two
/// ranges neither overlap nor touch (`a.upperBound < b.lowerBound`: touching ones merge).
public struct ChunkRanges: Equatable, Sendable {
    public private(set) var ranges: [Range<Int>]
    /// How many indices the ranges cover.
    public private(set) var count: Int

    public init() {
        ranges = []
        count = 0
    }

    /// Ranges as stored; nil unless sorted, merged, non-empty and non-negative.
    public init?(_ ranges: [Range<Int>]) {
        var previous: Int?
        for range in ranges {
            guard !range.isEmpty, range.lowerBound >= 0 else { return nil }
            if let previous, range.lowerBound <= previous { return nil }
            previous = range.upperBound
        }
        self.ranges = ranges
        count = ranges.reduce(0) { $0 + $1.count }
    }

    /// The first range whose upper bound is at least `index`: the one holding it, the one
    /// ending right before it, or the first after it (`ranges.count` when none).
    private func firstReaching(_ index: Int) -> Int {
        var low = 0, high = ranges.count
        while low < high {
            let mid = (low + high) / 2
            if ranges[mid].upperBound < index { low = mid + 1 } else { high = mid }
        }
        return low
    }

    public func contains(_ index: Int) -> Bool {
        let at = firstReaching(index)
        return at < ranges.count && ranges[at].contains(index)
    }

    /// Adds `index`, merging it into the ranges it touches; false when it was there already
    /// (or is negative).
    @discardableResult
    public mutating func insert(_ index: Int) -> Bool {
        guard index >= 0 else { return false }
        let at = firstReaching(index)
        if at < ranges.count && ranges[at].contains(index) { return false }
        count += 1
        if at < ranges.count && ranges[at].upperBound == index {
            // Extends the range ending right before it, and joins the next if it now touches.
            if at + 1 < ranges.count && ranges[at + 1].lowerBound == index + 1 {
                ranges[at] = ranges[at].lowerBound..<ranges[at + 1].upperBound
                ranges.remove(at: at + 1)
            } else {
                ranges[at] = ranges[at].lowerBound..<index + 1
            }
        } else if at < ranges.count && ranges[at].lowerBound == index + 1 {
            ranges[at] = index..<ranges[at].upperBound
        } else {
            ranges.insert(index..<index + 1, at: at)
        }
        return true
    }

    /// The gaps within `bounds`, in order: the ranges of indices not in the set.
    public func missing(in bounds: Range<Int>) -> [Range<Int>] {
        var gaps: [Range<Int>] = []
        var next = bounds.lowerBound
        for range in ranges[firstReaching(bounds.lowerBound)...] {
            if range.lowerBound >= bounds.upperBound { break }
            if range.lowerBound > next { gaps.append(next..<range.lowerBound) }
            next = max(next, range.upperBound)
        }
        if next < bounds.upperBound { gaps.append(next..<bounds.upperBound) }
        return gaps
    }

    /// What the store keeps: each range as its start and end, big-endian u32s (a chunk's
    /// index is a u32 on the wire). Eight bytes per range; nothing for an empty set.
    public var encoded: [UInt8] {
        var w = ByteWriter(capacity: ranges.count * 8)
        for range in ranges {
            w.u32(UInt32(range.lowerBound))
            w.u32(UInt32(range.upperBound))
        }
        return w.bytes
    }

    /// The stored bytes; nil when they are not whole ranges, sorted and merged.
    public init?(encoded bytes: [UInt8]) {
        guard bytes.count % 8 == 0 else { return nil }
        var r = ByteReader(bytes)
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(bytes.count / 8)
        while !r.isAtEnd {
            guard let start = try? r.u32(), let end = try? r.u32(), start < end else { return nil }
            ranges.append(Int(start)..<Int(end))
        }
        self.init(ranges)
    }
}
