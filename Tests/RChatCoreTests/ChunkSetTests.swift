import XCTest
import RChatCore

final class ChunkSetTests: XCTestCase {
    func testInsertContainsMissingAndTheStoredBytes() {
        var set = ChunkSet(count: 11)
        XCTAssertEqual(set.encoded, [], "nothing done: nothing stored")
        XCTAssertEqual(set.missing(), Array(0..<11))
        XCTAssertTrue(set.insert(3))
        XCTAssertFalse(set.insert(3), "twice")
        XCTAssertFalse(set.insert(11), "past the end")
        XCTAssertFalse(set.insert(-1))
        for i in 0..<8 { set.insert(i) }
        XCTAssertEqual(set.doneCount, 8)
        XCTAssertEqual(set.encoded.count, 8, "one range")
        XCTAssertEqual(set.missing(), [8, 9, 10])
        XCTAssertEqual(set.missing(limit: 2), [8, 9])
        XCTAssertFalse(set.isComplete)
        XCTAssertEqual(ChunkSet(count: 11, encoded: set.encoded), set, "the stored bytes come back as the same set")
        for i in 8..<11 { set.insert(i) }
        XCTAssertTrue(set.isComplete)
        XCTAssertEqual(set.missing(), [])
    }

    func testStoredBytesThatDoNotFitAreRefused() {
        var w = ByteWriter()
        w.u32(0); w.u32(12)
        XCTAssertNil(ChunkSet(count: 11, encoded: w.bytes), "a range past the last chunk")
        XCTAssertNotNil(ChunkSet(count: 12, encoded: w.bytes))
        XCTAssertNil(ChunkSet(count: 11, encoded: [0, 0, 0, 1]), "not whole ranges")
        XCTAssertNil(ChunkSet(count: 0, encoded: []))
    }

    /// The claim sizes nothing: a file of 2^24 chunks with three of them done stores three
    /// ranges, and its gaps are found without walking every chunk.
    func testAHugeClaimStoresOnlyItsRanges() {
        var set = ChunkSet(count: 1 << 24)
        XCTAssertEqual(set.encoded.count, 0)
        set.insert(0); set.insert(5); set.insert(1 << 23)
        XCTAssertEqual(set.encoded.count, 24)
        XCTAssertEqual(set.missing(limit: 5), [1, 2, 3, 4, 6])
        XCTAssertEqual(set.done.missing(in: 0..<set.count), [1..<5, 6..<(1 << 23), (1 << 23) + 1..<(1 << 24)])
    }

    /// A bitmap as schema version 13 stored it becomes the same chunks as ranges.
    func testABitmapFromBeforeRangesIsRead() {
        let set = ChunkSet(count: 20, bitmap: [0b0000_0111, 0b1000_0001, 0b0000_1000])
        XCTAssertEqual(set?.done.ranges, [0..<3, 8..<9, 15..<16, 19..<20])
        XCTAssertEqual(set?.doneCount, 6)
        XCTAssertNil(ChunkSet(count: 11, bitmap: [0]), "too short")
        XCTAssertNil(ChunkSet(count: 11, bitmap: [0, 0, 0]), "too long")
        XCTAssertNil(ChunkSet(count: 11, bitmap: [0, 0b1000_0000]), "a bit past the last chunk")
        XCTAssertNil(ChunkSet(count: 0, bitmap: []))
        XCTAssertEqual(ChunkSet(count: 16, bitmap: [0xFF, 0x01])?.doneCount, 9)
        XCTAssertEqual(ChunkSet(count: 16, bitmap: [0xFF, 0xFF])?.isComplete, true)
    }
}
