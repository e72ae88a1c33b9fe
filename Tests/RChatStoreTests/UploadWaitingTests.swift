import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// What a file being sent waits for (`attachments.waiting`), and a backoff cut short when
/// room frees at the relay.
final class UploadWaitingTests: StoreTestCase {
    private func outgoingFile() throws -> MessageRowID {
        let file = Attachment(kind: .file, name: "big.bin", size: 200_000, contentHash: [UInt8](repeating: 1, count: 32),
                              key: [UInt8](repeating: 2, count: 32))
        let row = try store.insertOutgoing(contact: sam, id: .random(), content: .attachment(file), at: 100)
        try store.insertOutgoingAttachment(message: row, chunkCount: 4, sentCopy: "files/sent/big.bin",
                                           streamHeader: [UInt8](repeating: 3, count: 24), streamState: [4])
        return row
    }

    func testWhatAFileWaitsForIsStoredAndReadBack() throws {
        let row = try outgoingFile()
        XCTAssertNil(try store.attachment(message: row)?.waiting, "nothing at first")
        for reason in UploadWait.allCases {
            try store.setWaiting(DeliveryKey(message: row, member: sam), reason)
            XCTAssertEqual(try store.attachment(message: row)?.waiting, reason)
        }
        try store.setWaiting(DeliveryKey(message: row, member: sam), nil)
        XCTAssertNil(try store.attachment(message: row)?.waiting)
        XCTAssertThrowsError(try store.database.execute("UPDATE attachment_sends SET waiting = 'later' WHERE message_rowid = ?",
                                                        [.integer(row.rawValue)]), "only the reasons UploadWait knows")
    }

    func testADeliveredReceiptForAFilesItemLeavesItToTheWholeFile() throws {
        let file = try outgoingFile()
        let text = try store.insertOutgoing(contact: sam, id: .random(), content: .text("and a note"), at: 101)
        let fileID = try XCTUnwrap(store.message(file)).id, textID = try XCTUnwrap(store.message(text)).id
        let changes = try store.raiseStatuses(contact: sam, ids: [fileID, textID], event: .deliveredReceipt, exceptAttachments: true, at: 200)
        XCTAssertEqual(changes.map(\.id), [textID], "the text only")
        XCTAssertEqual(try store.message(file)?.status, .sending)
        XCTAssertNotNil(try store.outboxItem(message: file), "the file still goes")
        XCTAssertEqual(try store.raiseStatuses(contact: sam, ids: [fileID], event: .deliveredReceipt, at: 300).map(\.current), [.delivered],
                       "the whole file's receipt")
    }

    func testAttemptNowCutsABackoffShortAndNeverPutsOneOff() throws {
        let row = try outgoingFile()
        try store.recordSendAttempt(message: row, session: nil, nextAttemptAt: 400)
        try store.attemptNow(message: row, at: 150)
        XCTAssertEqual(try store.outboxItem(message: row)?.nextAttemptAt, 150)
        XCTAssertEqual(try store.outboxItem(message: row)?.attempts, 1, "not an attempt of its own")
        try store.attemptNow(message: row, at: 300)
        XCTAssertEqual(try store.outboxItem(message: row)?.nextAttemptAt, 150, "an earlier time stays")
    }
}
