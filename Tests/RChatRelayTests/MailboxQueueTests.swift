import RChatNet
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

    func testRecordsCarryTheirSenderAndCoverIsCountedApart() {
        let q = MailboxQueue(mailbox: mailbox)
        q.append(id: 1, heldAt: 1, origin: 7, payload: [UInt8](repeating: 1, count: 100), cover: true, sender: 9)
        q.append(id: 2, heldAt: 2, origin: 7, payload: [UInt8](repeating: 2, count: 50), sender: 0xFFFF_FFFE)
        XCTAssertEqual(q.liveCover, 1)
        XCTAssertEqual(q.liveCoverBytes, 100)
        let first = q.takeNext(), second = q.takeNext()
        XCTAssertEqual(first?.sender, 9)
        XCTAssertEqual(first?.isCover, true)
        XCTAssertEqual(second?.sender, 0xFFFF_FFFE)
        XCTAssertEqual(second?.isCover, false)
        XCTAssertEqual(second.map { Array(q.payload(of: $0)) }, [UInt8](repeating: 2, count: 50))
        XCTAssertEqual(q.acknowledge(1)?.sender, 9)
        XCTAssertEqual(q.liveCover, 0)
        XCTAssertEqual(q.liveCoverBytes, 0)
    }

    func testSenderSharesBudgetEachHostAndMailboxAndFreeWhatLeaves() {
        var limits = RelayConfiguration(keyFile: "")
        limits.maxHeldBytesPerHost = 300
        limits.maxHeldBytesPerSender = 200
        var shares = SenderShares()
        let host = HostAddress(high: 0, low: 0xFFFF_7F00_0002), other = HostAddress(high: 0, low: 0xFFFF_7F00_0003)
        let a = HeldSender(host: host, mailbox: mailbox)
        let b = HeldSender(host: host, mailbox: MailboxID(publicKey: [UInt8](repeating: 2, count: 32)))
        let n = shares.add(200, from: a)
        XCTAssertFalse(shares.admits(1, from: a, limits: limits), "the mailbox's share")
        XCTAssertTrue(shares.admits(100, from: b, limits: limits))
        XCTAssertFalse(shares.admits(101, from: b, limits: limits), "the host's share")
        XCTAssertTrue(shares.admits(200, from: HeldSender(host: other, mailbox: nil), limits: limits))
        limits.maxHeldBytes = 400
        XCTAssertFalse(shares.admits(1, from: b, limits: limits), "never more than a quarter of the relay for a host")
        shares.remove(200, number: n)
        XCTAssertEqual(shares.bytesByHost, [:])
        XCTAssertEqual(shares.bytesByMailbox, [:])
        XCTAssertEqual(shares.senders.count, 0)
    }

    func testPersistedContentKeepsItsSenderAndOlderRowsStillOpen() {
        let sender = HeldSender(host: HostAddress(high: 0x2001_0db8_0000_0001, low: 0), mailbox: mailbox)
        let payload: [UInt8] = [1, 2, 3]
        let decoded = HeldPersistence.decodeContent(HeldPersistence.encodeContent(origin: .own, payload: payload, sender: sender))
        XCTAssertEqual(decoded?.0, sender)
        XCTAssertEqual(decoded?.1, .own)
        XCTAssertEqual(decoded?.2, payload)
        let token = InviteToken.derived(mailbox: mailbox, salt: [UInt8](repeating: 3, count: 16))
        let older = HeldPersistence.decodeContent(HeldPersistence.encodeContent(origin: .invite(token), payload: payload))
        XCTAssertNil(older?.0, "a row written before senders were kept")
        XCTAssertEqual(older?.1, .invite(token))
        XCTAssertEqual(older?.2, payload)
        XCTAssertNil(HeldPersistence.decodeContent([5, 3, 0, 0]), "a cut sender is unreadable")
    }
}
