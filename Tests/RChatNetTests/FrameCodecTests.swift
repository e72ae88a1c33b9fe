import RChatNet
import XCTest

final class FrameCodecTests: XCTestCase {
    func testFramesSplitAcrossReadsComeOutWhole() throws {
        var decoder = FrameDecoder(maximumBodyBytes: 100)
        let stream = FrameCodec.encode([1, 2, 3]) + FrameCodec.encode(Array(repeating: 9, count: 100))
        for byte in stream.prefix(5) { decoder.append([byte]); if decoder.bufferedBytes < 5 { XCTAssertNil(try decoder.next()) } }
        XCTAssertNil(try decoder.next())
        decoder.append(Array(stream[5...]))
        XCTAssertEqual(try decoder.next(), [1, 2, 3])
        XCTAssertEqual(try decoder.next(), Array(repeating: 9, count: 100))
        XCTAssertNil(try decoder.next())
        XCTAssertEqual(decoder.bufferedBytes, 0)
    }

    func testOversizedPrefixIsRejectedBeforeTheBodyArrives() {
        var decoder = FrameDecoder(maximumBodyBytes: 100)
        decoder.append([0, 0, 0, 101])
        XCTAssertThrowsError(try decoder.next()) { XCTAssertEqual($0 as? FrameError, .oversized(announced: 101, maximum: 100)) }
        var huge = FrameDecoder(maximumBodyBytes: 100)
        huge.append([0xFF, 0xFF, 0xFF, 0xFF])
        XCTAssertThrowsError(try huge.next())
    }

    func testEmptyFramesAreGarbage() {
        var decoder = FrameDecoder(maximumBodyBytes: 100)
        decoder.append([0, 0, 0, 0])
        XCTAssertThrowsError(try decoder.next()) { XCTAssertEqual($0 as? FrameError, .empty) }
    }

    func testByteQueueConsumesAndCompacts() {
        var q = ByteQueue()
        q.append(contentsOf: Array(repeating: UInt8(7), count: 200_000))
        q.consume(150_000)
        XCTAssertEqual(q.count, 50_000)
        XCTAssertEqual(q.start, 0, "compacted once most of it is consumed")
        q.appendU32(0x01020304)
        XCTAssertEqual(q.u32(at: 50_000), 0x01020304)
        q.consume(q.count)
        XCTAssertTrue(q.isEmpty)
    }
}
