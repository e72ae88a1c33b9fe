import XCTest
import RChatCore

/// `ChunkRanges` against a plain set of numbers: every way an insert can fall (alone, at a
/// range's either end, joining two, inside one, twice), what it contains, its gaps, its
/// count and its stored bytes.
final class ChunkRangesTests: XCTestCase {
    func testEachWayAnInsertFalls() {
        var r = ChunkRanges()
        XCTAssertTrue(r.insert(5))
        XCTAssertEqual(r.ranges, [5..<6], "alone")
        XCTAssertTrue(r.insert(6))
        XCTAssertEqual(r.ranges, [5..<7], "after the end: extends it")
        XCTAssertTrue(r.insert(4))
        XCTAssertEqual(r.ranges, [4..<7], "before the start: extends it")
        XCTAssertTrue(r.insert(9))
        XCTAssertTrue(r.insert(0))
        XCTAssertEqual(r.ranges, [0..<1, 4..<7, 9..<10], "apart: a range of its own, in order")
        XCTAssertTrue(r.insert(8))
        XCTAssertTrue(r.insert(7))
        XCTAssertEqual(r.ranges, [0..<1, 4..<10], "filling the last gap: joins both")
        XCTAssertFalse(r.insert(5), "inside: already there")
        XCTAssertFalse(r.insert(9), "at the last: already there")
        XCTAssertFalse(r.insert(-1))
        XCTAssertEqual(r.count, 7)
    }

    func testContains() {
        let r = ChunkRanges([2..<4, 10..<11])!
        XCTAssertEqual((0..<13).filter(r.contains), [2, 3, 10])
        XCTAssertFalse(r.contains(-1))
        XCTAssertFalse(ChunkRanges().contains(0))
    }

    func testMissingRanges() {
        let r = ChunkRanges([2..<4, 10..<11])!
        XCTAssertEqual(r.missing(in: 0..<12), [0..<2, 4..<10, 11..<12])
        XCTAssertEqual(r.missing(in: 0..<11), [0..<2, 4..<10], "ending at a range's end")
        XCTAssertEqual(r.missing(in: 3..<10), [4..<10], "starting inside a range")
        XCTAssertEqual(r.missing(in: 4..<5), [4..<5])
        XCTAssertEqual(r.missing(in: 2..<4), [], "all there")
        XCTAssertEqual(r.missing(in: 5..<5), [])
        XCTAssertEqual(ChunkRanges().missing(in: 0..<3), [0..<3])
    }

    /// Every order of inserting 0..<7, and random inserts into a larger span, agree with a
    /// `Set`: contents, count, gaps; and the ranges stay sorted, merged and non-empty.
    func testAgreesWithASetWhateverTheOrder() {
        func check(_ r: ChunkRanges, _ set: Set<Int>, span: Int, _ note: String) {
            XCTAssertEqual(r.count, set.count, note)
            XCTAssertEqual((0..<span).filter(r.contains), set.sorted(), note)
            XCTAssertEqual(r.missing(in: 0..<span).flatMap { Array($0) }, (0..<span).filter { !set.contains($0) }, note)
            XCTAssertNotNil(ChunkRanges(r.ranges), "sorted and merged: \(note)")
            XCTAssertEqual(ChunkRanges(encoded: r.encoded), r, note)
        }
        func permutations(_ items: [Int]) -> [[Int]] {
            guard let first = items.first else { return [[]] }
            return permutations(Array(items.dropFirst())).flatMap { rest in
                (0...rest.count).map { i in var p = rest; p.insert(first, at: i); return p }
            }
        }
        for order in permutations(Array(0..<7)) {
            var r = ChunkRanges(), set = Set<Int>()
            for n in order {
                XCTAssertEqual(r.insert(n), set.insert(n).inserted)
                check(r, set, span: 8, "\(order)")
            }
            XCTAssertEqual(r.ranges, [0..<7])
        }
        var generator = SystemRandomNumberGenerator()
        for round in 0..<50 {
            var r = ChunkRanges(), set = Set<Int>()
            for _ in 0..<60 {
                let n = Int.random(in: 0..<80, using: &generator)
                XCTAssertEqual(r.insert(n), set.insert(n).inserted)
            }
            check(r, set, span: 81, "round \(round)")
            XCTAssertLessThanOrEqual(r.ranges.count, (80 - set.count) + 1, "one range per gap, at most")
        }
    }

    func testStoredBytes() {
        let r = ChunkRanges([1..<3, 0x0102_0304..<0x0102_0305])!
        XCTAssertEqual(r.encoded, [0, 0, 0, 1, 0, 0, 0, 3, 1, 2, 3, 4, 1, 2, 3, 5], "start and end, big-endian u32s")
        XCTAssertEqual(ChunkRanges(encoded: r.encoded), r)
        XCTAssertEqual(ChunkRanges(encoded: []), ChunkRanges())
        XCTAssertNil(ChunkRanges(encoded: [0, 0, 0, 1]), "half a range")
        XCTAssertNil(ChunkRanges(encoded: [0, 0, 0, 3, 0, 0, 0, 3]), "an empty range")
        XCTAssertNil(ChunkRanges(encoded: [0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0, 1, 0, 0, 0, 2]), "out of order")
        XCTAssertNil(ChunkRanges([0..<2, 2..<3]), "touching: not merged")
        XCTAssertNil(ChunkRanges([0..<3, 1..<4]), "overlapping")
        XCTAssertNil(ChunkRanges([-1..<2]))
        XCTAssertEqual(ChunkRanges([0..<2, 3..<5])?.count, 4)
    }
}
