@testable import RChatRelay
import RChatWire
import XCTest

/// The arena queue behind holding: order, out-of-order acknowledgement, restart, expiry.
final class MailboxQueueTests: XCTestCase {
    let mailbox = MailboxID(publicKey: [UInt8](repeating: 1, count: 32))

    func testHandsOverOldestFirstAndDeletesOnlyWhatWasAcknowledged() {
        let q = MailboxQueue(mailbox: mailbox)
        for i in 0..<1000 { q.append(id: HeldItemID(i + 1), heldAt: Int64(i), origin: 7, payload: [UInt8](repeating: UInt8(i % 256), count: 256)) }
        // Compact: 29 header bytes per record, plus at most one partly filled chunk.
        XCTAssertLessThanOrEqual(q.allocatedBytes, 1000 * (256 + MailboxQueue.headerBytes) + MailboxQueue.largestChunk)
        var taken: [MailboxQueue.Record] = []
        while let r = q.takeNext() { taken.append(r) }
        XCTAssertEqual(taken.map(\.id), (1...1000).map { HeldItemID($0) })
        XCTAssertEqual(Array(q.payload(of: taken[3])), [UInt8](repeating: 3, count: 256))
        // Acknowledge the odd ones, out of order; the connection dies; the even ones come back.
        for r in taken.reversed() where r.id % 2 == 1 { XCTAssertNotNil(q.acknowledge(r.id)) }
        XCTAssertNil(q.acknowledge(1), "twice is a no-op")
        q.restartHandover()
        var again: [HeldItemID] = []
        while let r = q.takeNext() { again.append(r.id) }
        XCTAssertEqual(again, (1...500).map { HeldItemID($0 * 2) })
        XCTAssertEqual(q.liveCount, 500)
    }

    func testExpiryDropsTheOldFromTheFront() {
        let q = MailboxQueue(mailbox: mailbox)
        for i in 0..<10 { q.append(id: HeldItemID(i + 1), heldAt: Int64(i * 100), origin: 1, payload: [1, 2]) }
        var deleted: [HeldItemID] = []
        XCTAssertEqual(q.expire(heldAtOrBefore: 450) { deleted.append($0.id) }, 5)
        XCTAssertEqual(deleted, [1, 2, 3, 4, 5])
        XCTAssertEqual(q.takeNext()?.id, 6)
        XCTAssertEqual(q.expire(heldAtOrBefore: 10_000) { _ in }, 5)
        XCTAssertTrue(q.isEmpty)
        XCTAssertTrue(q.chunks.isEmpty, "memory returned")
        q.append(id: 11, heldAt: 0, origin: 1, payload: [3])
        XCTAssertEqual(q.takeNext()?.id, 11)
    }

    func testRequestsAreCountedApartThroughAcknowledgementAndExpiry() {
        let q = MailboxQueue(mailbox: mailbox)
        for i in 0..<6 { q.append(id: HeldItemID(i + 1), heldAt: Int64(i), origin: 1, payload: [1], request: i % 2 == 0) }
        XCTAssertEqual(q.liveRequests, 3)
        XCTAssertEqual(q.liveConversationCount, 3)
        let first = q.takeNext()
        XCTAssertEqual(first?.isRequest, true)
        XCTAssertEqual(q.takeNext()?.isRequest, false)
        XCTAssertEqual(q.acknowledge(1)?.isRequest, true)
        XCTAssertEqual(q.acknowledge(2)?.isRequest, false)
        XCTAssertEqual(q.liveRequests, 2)
        XCTAssertEqual(q.liveConversationCount, 2)
        XCTAssertEqual(q.expire(heldAtOrBefore: 2) { _ in }, 1, "item 3, a request")
        XCTAssertEqual(q.liveRequests, 1)
        XCTAssertEqual(q.liveConversationCount, 2)
    }

    /// What `--quota-bytes` reads: conversation payload bytes, requests apart, through
    /// handover, acknowledgement, a restarted handover and expiry.
    func testConversationBytesAreCountedApartFromRequests() {
        let q = MailboxQueue(mailbox: mailbox)
        for i in 0..<6 {
            q.append(id: HeldItemID(i + 1), heldAt: Int64(i), origin: 1, payload: [UInt8](repeating: 0, count: 100 * (i + 1)), request: i % 2 == 0)
        }
        XCTAssertEqual(q.liveBytes, 2100)
        XCTAssertEqual(q.liveRequestBytes, 100 + 300 + 500)
        XCTAssertEqual(q.liveConversationBytes, 200 + 400 + 600)
        while q.takeNext() != nil {}
        XCTAssertEqual(q.liveConversationBytes, 1200, "handed over, not acknowledged: still counted")
        XCTAssertEqual(q.acknowledge(2)?.length, 200)
        XCTAssertEqual(q.acknowledge(3)?.length, 300)
        XCTAssertEqual(q.liveConversationBytes, 1000)
        XCTAssertEqual(q.liveRequestBytes, 600)
        q.restartHandover()
        XCTAssertEqual(q.liveConversationBytes, 1000, "a connection that goes changes nothing")
        XCTAssertEqual(q.expire(heldAtOrBefore: 3) { _ in }, 2, "items 1 (a request) and 4")
        XCTAssertEqual(q.liveConversationBytes, 600)
        XCTAssertEqual(q.liveRequestBytes, 500)
        XCTAssertEqual(q.expire(heldAtOrBefore: .max) { _ in }, 2)
        XCTAssertEqual(q.liveBytes, 0)
        XCTAssertEqual(q.liveRequestBytes, 0)
    }
}
