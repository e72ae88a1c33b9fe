import XCTest
import RChatCore

final class ChunkSetTests: XCTestCase {
    func testInsertContainsMissingAndTheStoredBytes() {
        var set = ChunkSet(count: 11)
        XCTAssertEqual(set.bits.count, 2)
        XCTAssertEqual(set.missing(), Array(0..<11))
        XCTAssertTrue(set.insert(3))
        XCTAssertFalse(set.insert(3), "twice")
        XCTAssertFalse(set.insert(11), "past the end")
        XCTAssertFalse(set.insert(-1))
        for i in 0..<8 { set.insert(i) }
        XCTAssertEqual(set.doneCount, 8)
        XCTAssertEqual(set.missing(), [8, 9, 10])
        XCTAssertEqual(set.missing(limit: 2), [8, 9])
        XCTAssertFalse(set.isComplete)
        for i in 8..<11 { set.insert(i) }
        XCTAssertTrue(set.isComplete)
        XCTAssertEqual(ChunkSet(count: 11, bits: set.bits), set, "the stored bytes come back as the same set")
    }

    func testStoredBytesThatDoNotFitAreRefused() {
        XCTAssertNil(ChunkSet(count: 11, bits: [0]), "too short")
        XCTAssertNil(ChunkSet(count: 11, bits: [0, 0, 0]), "too long")
        XCTAssertNil(ChunkSet(count: 11, bits: [0, 0b1000_0000]), "a bit past the last chunk")
        XCTAssertNil(ChunkSet(count: 0, bits: []))
        XCTAssertEqual(ChunkSet(count: 16, bits: [0xFF, 0x01])?.doneCount, 9)
    }
}
