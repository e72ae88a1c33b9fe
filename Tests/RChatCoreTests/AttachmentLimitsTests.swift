import XCTest
@testable import RChatCore

/// The size rule for attachments (MB of 1,048,576 bytes) and the one line each refusal
/// shows.
final class AttachmentLimitsTests: XCTestCase {
    func testTheDefaultIsOneHundredMegabytesOf1048576Bytes() {
        let limits = AttachmentLimits()
        XCTAssertEqual(limits.maximumMB, 100)
        XCTAssertEqual(limits.maximumBytes, 104_857_600)
        XCTAssertEqual(limits.check(size: 1), .fits)
        XCTAssertEqual(limits.check(size: 104_857_600), .fits, "exactly the limit fits")
        XCTAssertEqual(limits.check(size: 104_857_601), .tooLarge(size: 104_857_601, limitMB: 100))
        XCTAssertEqual(limits.check(size: 0), .empty)
        XCTAssertEqual(limits.check(size: .max), .tooLarge(size: .max, limitMB: 100))
    }

    func testOtherLimitsAndTheirBound() {
        XCTAssertEqual(AttachmentLimits(maximumMB: 1).check(size: 1_048_577), .tooLarge(size: 1_048_577, limitMB: 1))
        XCTAssertEqual(AttachmentLimits(maximumMB: 0).check(size: 1), .tooLarge(size: 1, limitMB: 0))
        // Never past what an attachment can say (2^40 bytes), and never an overflow.
        let huge = AttachmentLimits(maximumMB: .max)
        XCTAssertEqual(huge.maximumMB, 1_048_576)
        XCTAssertEqual(huge.maximumBytes, Attachment.maximumSize)
        XCTAssertEqual(huge.check(size: Attachment.maximumSize), .fits)
        XCTAssertEqual(huge.check(size: Attachment.maximumSize + 1), .tooLarge(size: Attachment.maximumSize + 1, limitMB: 1_048_576))
    }

    func testTheLinesAUserSees() {
        let limits = AttachmentLimits()
        XCTAssertNil(limits.check(size: 10).message(name: "report.pdf"))
        XCTAssertEqual(limits.check(size: 0).message(name: "report.pdf"), "report.pdf is empty: there is nothing to send")
        XCTAssertEqual(limits.check(size: 126_248_550).message(name: "report.pdf"),
                       "report.pdf is 120.4 MB; the limit is 100 MB (rchat settings max-attachment-mb N changes it)")
        // One byte over is never shown as the limit itself.
        XCTAssertEqual(limits.check(size: 104_857_601).message(name: "a.bin"),
                       "a.bin is 100.1 MB; the limit is 100 MB (rchat settings max-attachment-mb N changes it)")
        XCTAssertEqual(AttachmentLimits(maximumMB: 1).check(size: 3 << 30).message(name: "film.mkv"),
                       "film.mkv is 3.0 GB; the limit is 1 MB (rchat settings max-attachment-mb N changes it)")
        for size: UInt64 in [0, 104_857_601, 1 << 40] {
            let line = limits.check(size: size).message(name: "x")!
            XCTAssertFalse(line.contains("\n"), line)
        }
    }
}
