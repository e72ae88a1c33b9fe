import XCTest
@testable import RChatCore

/// Sizes and rates as the command line and the view show them: 1024-based, one decimal
/// above 1 KB.
final class AttachmentByteCountTests: XCTestCase {
    func testSizes() {
        let cases: [(UInt64, String)] = [
            (0, "0 B"), (1, "1 B"), (512, "512 B"), (1023, "1023 B"),
            (1024, "1.0 KB"), (1536, "1.5 KB"), (1075, "1.0 KB"), (1076, "1.1 KB"),
            (12_897_485, "12.3 MB"), (1 << 30, "1.0 GB"), (5 << 40, "5.0 TB"), (3 << 50, "3.0 PB"),
            (UInt64.max, "16.0 EB"),
        ]
        for (bytes, text) in cases { XCTAssertEqual(ByteCount.display(bytes), text, "\(bytes)") }
    }

    func testRoundingNeverShows1024OfAUnit() {
        XCTAssertEqual(ByteCount.display(1_048_575), "1.0 MB")
        XCTAssertEqual(ByteCount.display(1_048_524), "1023.9 KB")
        XCTAssertEqual(ByteCount.display((1 << 30) - 1), "1.0 GB")
        for exponent in 1...5 {
            let text = ByteCount.display((UInt64(1) << UInt64(10 * (exponent + 1))) - 1)
            XCTAssertEqual(text, "1.0 \(ByteCount.units[exponent])", text)
        }
    }

    func testRoundingUpForLimits() {
        XCTAssertEqual(ByteCount.display(104_857_601, roundingUp: true), "100.1 MB")
        XCTAssertEqual(ByteCount.display(104_857_600, roundingUp: true), "100.0 MB")
        XCTAssertEqual(ByteCount.display(104_857_601), "100.0 MB")
    }

    func testRates() {
        XCTAssertEqual(ByteCount.rate(3.1 * 1_048_576), "3.1 MB/s")
        XCTAssertEqual(ByteCount.rate(512), "512 B/s")
        XCTAssertEqual(ByteCount.rate(511.6), "512 B/s")
        XCTAssertEqual(ByteCount.rate(1536), "1.5 KB/s")
        for nothing in [0, -5, .nan, .infinity, -.infinity] as [Double] {
            XCTAssertEqual(ByteCount.rate(nothing), "0 B/s", "\(nothing)")
        }
        XCTAssertEqual(ByteCount.rate(1e30), "16.0 EB/s")
    }
}
