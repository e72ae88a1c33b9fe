import XCTest
import RChatCore

final class IncomingFilePolicyTests: XCTestCase {
    let mb = AttachmentLimits.bytesPerMB
    let margin = IncomingFilePolicy.diskMarginBytes

    func testTheLimitThenHowManyThenTheDisk() {
        func decide(_ size: UInt64, limit: UInt64 = 2048, moving: Int = 0, reserved: UInt64 = 0, free: UInt64? = nil) -> IncomingFilePolicy.Decision {
            IncomingFilePolicy.decide(size: size, limitMB: limit, moving: moving, reserved: reserved, free: free)
        }
        XCTAssertEqual(decide(2048 * mb), .accept, "at the limit")
        XCTAssertEqual(decide(2048 * mb + 1), .overLimit(limitMB: 2048))
        XCTAssertEqual(decide(1 << 40), .overLimit(limitMB: 2048), "the attack's claim")
        XCTAssertEqual(decide(1 << 40, limit: 1_048_576), .accept, "the largest limit takes the largest file")
        XCTAssertEqual(decide(10, moving: IncomingFilePolicy.maximumMovingPerContact - 1), .accept)
        XCTAssertEqual(decide(10, moving: IncomingFilePolicy.maximumMovingPerContact), .tooMany(moving: IncomingFilePolicy.maximumMovingPerContact))
        XCTAssertEqual(decide(3 << 40, limit: 10, moving: 99), .overLimit(limitMB: 10), "over the limit first")
        XCTAssertEqual(decide(100, free: 100 + margin), .accept, "fits with the margin")
        XCTAssertEqual(decide(101, free: 100 + margin), .noRoom(freeBytes: 100 + margin))
        XCTAssertEqual(decide(100, reserved: 1, free: 100 + margin), .noRoom(freeBytes: 100 + margin), "what files arriving still need counts")
        XCTAssertEqual(decide(100, reserved: .max, free: .max), .noRoom(freeBytes: .max), "no overflow")
        XCTAssertEqual(decide(100, reserved: .max, free: nil), .accept, "a disk that cannot be asked: the write decides")
    }

    /// What the receiver tells the sender comes back as the same refusal, and says why in
    /// the sender's row; what this version does not know is nothing.
    func testTheRefusalOnTheWireAndTheSendersRow() {
        let refusals: [IncomingFilePolicy.Decision] = [.overLimit(limitMB: 2048), .tooMany(moving: 16), .noRoom(freeBytes: 5 * mb)]
        for decision in refusals {
            let (why, figure) = try! XCTUnwrap(IncomingFilePolicy.wire(decision))
            XCTAssertEqual(IncomingFilePolicy.refusal(why: why, figure: figure), decision)
        }
        XCTAssertEqual(refusals.compactMap { IncomingFilePolicy.wire($0)?.why }, [1, 2, 3])
        XCTAssertNil(IncomingFilePolicy.wire(.accept))
        XCTAssertNil(IncomingFilePolicy.refusal(why: 0, figure: 1))
        XCTAssertNil(IncomingFilePolicy.refusal(why: 4, figure: 1))
        XCTAssertNil(IncomingFilePolicy.refusal(why: 2, figure: .max))
        XCTAssertEqual(IncomingFilePolicy.senderRow(.overLimit(limitMB: 1), name: "a.iso", contact: "Alice"),
                       "Alice did not download a.iso: it is over their limit of 1 MB.")
        XCTAssertEqual(IncomingFilePolicy.senderRow(.tooMany(moving: 16), name: "b.jpg", contact: "Alice"),
                       "Alice did not download b.jpg: too many of your files were arriving there at once.")
        XCTAssertEqual(IncomingFilePolicy.senderRow(.noRoom(freeBytes: 0), name: "c.mov", contact: "Alice"),
                       "Alice did not download c.mov: their disk had no room for it.")
        XCTAssertNil(IncomingFilePolicy.senderRow(.accept, name: "d", contact: "Alice"))
    }

    func testTheRowsAndReasons() {
        XCTAssertEqual(IncomingFilePolicy.row(.overLimit(limitMB: 2048), name: "a.iso", size: 3 << 40, contact: "Sam"),
                       "Sam offered a.iso (3.0 TB), over your limit of 2048 MB; it was not downloaded (rchat settings max-incoming-mb N changes the limit).")
        XCTAssertEqual(IncomingFilePolicy.row(.tooMany(moving: 16), name: "b.jpg", size: 2_000, contact: "Sam"),
                       "Sam offered b.jpg (2.0 KB) while 16 of their files were still arriving; it was not downloaded.")
        XCTAssertEqual(IncomingFilePolicy.row(.noRoom(freeBytes: 5 * mb), name: "c.mov", size: 3 << 30, contact: "Sam"),
                       "Sam offered c.mov (3.0 GB), more than this disk can take (5.0 MB free); it was not downloaded.")
        XCTAssertNil(IncomingFilePolicy.row(.accept, name: "d", size: 1, contact: "Sam"))
        XCTAssertNil(IncomingFilePolicy.reason(.accept))
        XCTAssertEqual(IncomingFilePolicy.reason(.overLimit(limitMB: 5)), "it is over your limit of 5 MB, so it was not downloaded")
        XCTAssertNotNil(IncomingFilePolicy.reason(.tooMany(moving: 16)))
        XCTAssertNotNil(IncomingFilePolicy.reason(.noRoom(freeBytes: 0)))
        XCTAssertEqual(IncomingFilePolicy.writeFailedRow(name: "e.bin", contact: "Sam", reason: "File too large"),
                       "e.bin from Sam could not be saved (File too large) and was discarded.")
    }
}
