import XCTest
import RChatCore

final class PaddingTests: XCTestCase {
    func testEveryLengthPadsToTheSmallestSizeItFitsAndUnpadsToItself() throws {
        for count in [0, 1, 171, 172, 173, 940, 941, 4_012, 16_300, 16_301, 65_532] {
            let inner = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let padded = Padding.padded(inner, sizes: Padding.payloadSizes)
            let expected = Padding.payloadSizes.first { $0 >= count + 4 }!
            XCTAssertEqual(padded.count, expected, "\(count) bytes")
            XCTAssertEqual(try Padding.unpadded(padded), inner, "\(count) bytes")
        }
    }

    func testWhatLiesOutsideCountsTowardsTheSize() throws {
        let padded = Padding.padded([1, 2, 3], sizes: Padding.wireSizes, outside: 20)
        XCTAssertEqual(padded.count + 20, 256)
        XCTAssertEqual(try Padding.unpadded(padded), [1, 2, 3])
        // One byte more than the first size takes goes to the next, never beyond it.
        let larger = Padding.padded([UInt8](repeating: 9, count: 256 - 20 - 4 + 1), sizes: Padding.wireSizes, outside: 20)
        XCTAssertEqual(larger.count + 20, 1_024)
    }

    func testBeyondTheLargestSizeOnlyTheTrailerIsAdded() throws {
        let inner = [UInt8](repeating: 1, count: 70_000)
        let padded = Padding.padded(inner, sizes: Padding.payloadSizes)
        XCTAssertEqual(padded.count, 70_004)
        XCTAssertEqual(try Padding.unpadded(padded), inner)
        XCTAssertEqual(Padding.padded([5], sizes: []).count, 5)
    }

    func testAnInnerLengthThatLiesIsRefused() {
        var padded = Padding.padded([1, 2, 3], sizes: Padding.payloadSizes)
        // Claims 173 bytes: one more than lies before the trailer.
        padded.replaceSubrange(padded.count - 4..<padded.count, with: [0, 0, 0, 173])
        XCTAssertThrowsError(try Padding.unpadded(padded)) { XCTAssertEqual($0 as? PaddingError, .lengthLies) }
        padded.replaceSubrange(padded.count - 4..<padded.count, with: [0xFF, 0xFF, 0xFF, 0xFF])
        XCTAssertThrowsError(try Padding.unpadded(padded)) { XCTAssertEqual($0 as? PaddingError, .lengthLies) }
        // The most it may claim: everything before the trailer.
        padded.replaceSubrange(padded.count - 4..<padded.count, with: [0, 0, 0, 172])
        XCTAssertEqual(try Padding.unpadded(padded).count, 172)
    }

    func testPaddingThatIsNotZeroOrTooShortIsRefused() {
        var padded = Padding.padded([1, 2, 3], sizes: Padding.payloadSizes)
        padded[100] = 1
        XCTAssertThrowsError(try Padding.unpadded(padded)) { XCTAssertEqual($0 as? PaddingError, .paddingNotZero) }
        XCTAssertThrowsError(try Padding.unpadded([0, 0, 0])) { XCTAssertEqual($0 as? PaddingError, .tooShort) }
        // Where every byte is authenticated already, only the length is checked.
        XCTAssertEqual(try Padding.unpadded(padded[...], checkingZeros: false), [1, 2, 3])
        padded[padded.count - 1] = 200
        XCTAssertThrowsError(try Padding.unpadded(padded[...], checkingZeros: false)) { XCTAssertEqual($0 as? PaddingError, .lengthLies) }
    }

    func testAnUnpaddedSliceIsAPrefixInPlace() throws {
        let buffer: [UInt8] = [9, 9] + Padding.padded([7, 8], sizes: [16])
        let inner = try Padding.unpadded(buffer[2...])
        XCTAssertEqual(inner.startIndex, 2)
        XCTAssertEqual(Array(inner), [7, 8])
    }

    func testEachWireSizeIsItsPayloadSizeAndRoomForTheLargestFrameAroundIt() {
        XCTAssertEqual(Padding.wireSizes, [256, 1_024, 4_096, 16_384, 65_616])
        // A deliver (54 bytes of fields with a rendezvous code) of a whole payload, with the
        // transport's trailer, length prefix and tag, lands on the wire size of that payload.
        for (payload, wire) in zip(Padding.payloadSizes, Padding.wireSizes) {
            XCTAssertEqual(Padding.paddedLength(of: 54 + payload, sizes: Padding.wireSizes, outside: 20) + 20, wire)
            XCTAssertEqual(Padding.paddedLength(of: 13 + payload, sizes: Padding.wireSizes, outside: 20) + 20, wire)
        }
    }
}
