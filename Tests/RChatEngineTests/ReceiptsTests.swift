import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatStore
import RChatRelayClient
@testable import RChatEngine

/// The receipts component alone: a real store and channel, and a stand-in for the rest of the
/// engine (`ReceiptContext`) that records the frames sent instead of giving them to a relay.
final class ReceiptsTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-receipts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// The rest of the engine as the component sees it: a frame "sent" is recorded with the
    /// completion its answer would run.
    private final class Context: ReceiptContext {
        let store: Store
        let clock: any Clock = SystemClock()
        var ticks: Double = 100
        var now: Int64 { clock.now() }
        let log = Logger.discarding
        var receiptWindowSeconds: Double = 0.2
        var sendsReceipts = true
        var channels: [ContactID: PairwiseChannel] = [:]
        var pace = false
        /// Frames the relay takes before it has no room.
        var room = Int.max
        var durable = true
        var sent: [(envelope: [UInt8], seq: UInt64)] = []
        var flushes = 0
        private var nextSeq: UInt64 = 1

        init(store: Store) { self.store = store }

        func channel(_ contact: ContactID) -> PairwiseChannel? { channels[contact] }
        func keepsPace(_ channel: PairwiseChannel) -> Bool { pace }
        func hasRoom(for channel: PairwiseChannel) -> Bool { room > 0 }
        func isDurable(_ channel: PairwiseChannel) -> Bool { durable }
        func flushLink(of channel: PairwiseChannel) { flushes += 1 }

        func sendOnLink(_ channel: PairwiseChannel, _ frame: LinkFrame, as completion: RelayCompletion, flush: Bool) throws -> UInt64 {
            guard case .envelope(let envelope) = frame else { throw EngineError.io("not an envelope") }
            room -= 1
            defer { nextSeq += 1 }
            sent.append((envelope, nextSeq))
            return nextSeq
        }
    }

    /// Alice's channel to Sam, in a session both hold; and Sam's side of it, to open what
    /// Alice sends.
    private typealias Pair = ChannelInSession

    private func pair() throws -> Pair {
        let p = try ChannelInSession(in: directory, at: 1_000)
        XCTAssertTrue(p.channel.canSend)
        return p
    }

    /// The pair, and a context that knows Alice's channel to Sam.
    private func pairAndContext() throws -> (Pair, Context) {
        let p = try pair()
        let context = Context(store: p.alice.store)
        context.channels[p.sam] = p.channel
        return (p, context)
    }

    /// `count` messages from Sam, stored: a Delivered receipt owed for each. Their ids.
    @discardableResult
    private func arrive(_ count: Int, _ p: Pair) throws -> [MessageID] {
        let messages = (0..<count).map { IncomingMessage(id: .random(), content: .text("m\($0)"), sentAt: 1_000, seq: Int64($0)) }
        _ = try p.alice.store.transaction { tx in try tx.insertIncoming(contact: p.sam, messages, at: 1_000) }
        return messages.map(\.id)
    }

    /// What Sam reads in each frame Alice sent: its kind and the ids it carries.
    private func opened(_ context: Context, _ p: Pair) throws -> [(kind: EnvelopeKind, ids: [MessageID])] {
        try context.sent.map { frame in
            let header = try Envelope.openHeader(frame.envelope, conversation: p.samSecret)
            let body = try p.samSession.open(frame.envelope, header: header)
            return (header.kind, Engine.receiptIDs(body))
        }
    }

    func testReceiptsOwedGoInFramesOfAtMostPerFrameIdsOldestFirst() throws {
        let (p, context) = try pairAndContext()
        let ids = try arrive(2_500, p)
        try p.alice.store.transaction { tx in try tx.oweReadReceipts(contact: p.sam, ids: Array(ids.prefix(1_100))) }

        let receipts = Receipts()
        receipts.schedule(urgent: false, context: context)
        XCTAssertEqual(receipts.due, 100.2, "after the receipt window")
        try receipts.flush(context: context)
        XCTAssertNil(receipts.due, "nothing more owed than one flush takes")

        let frames = try opened(context, p)
        XCTAssertEqual(frames.map(\.kind), [.receiptDelivered, .receiptDelivered, .receiptDelivered, .receiptRead, .receiptRead])
        XCTAssertEqual(frames.map(\.ids.count), [1_024, 1_024, 452, 1_024, 76])
        XCTAssertTrue(frames.prefix(3).flatMap(\.ids) == ids, "every Delivered once, in order")
        XCTAssertTrue(frames.suffix(2).flatMap(\.ids) == Array(ids.prefix(1_100)), "the Read owed, in order")
        XCTAssertEqual(context.flushes, 1, "one flush of the link for the lot")
        XCTAssertEqual(p.channel.traffic.readReceiptsInFlight.count, 1_100)
        XCTAssertEqual(p.channel.traffic.deliveredInFlight.sentThrough, try p.alice.store.deliveredReceiptsOwed(contact: p.sam, after: nil, limit: 5_000).last?.position)

        // In flight: not sent again by the next flush.
        try receipts.flush(context: context)
        XCTAssertEqual(context.sent.count, 5)
    }

    func testARefusedFrameIsOwedStillAndGoesAgainASecondLater() throws {
        let (p, context) = try pairAndContext()
        let ids = try arrive(3, p)
        try p.alice.store.transaction { tx in try tx.oweReadReceipts(contact: p.sam, ids: ids) }
        let receipts = Receipts()
        try receipts.flush(context: context)
        XCTAssertEqual(try opened(context, p).map(\.kind), [.receiptDelivered, .receiptRead])

        context.ticks = 250
        receipts.refused(.read(ids), to: p.sam, context: context)
        receipts.refused(.delivered, to: p.sam, context: context)
        XCTAssertEqual(receipts.due, 251, "a second after the refusal")
        XCTAssertTrue(p.channel.traffic.readReceiptsInFlight.isEmpty)
        XCTAssertNil(p.channel.traffic.deliveredInFlight.sentThrough, "Delivered go again from the store's mark")

        context.ticks = 251
        try receipts.flush(context: context)
        let again = try opened(context, p).suffix(2)
        XCTAssertEqual(again.map(\.kind), [.receiptDelivered, .receiptRead])
        XCTAssertEqual(again.map(\.ids), [ids, ids], "the same receipts, sent again")
    }

    func testNothingGoesWhileABatchOfTheConversationWaitsForTheDiskThenItDoes() throws {
        let (p, context) = try pairAndContext()
        // An earlier message, receipted: the store's mark is at it.
        try arrive(1, p)
        let mark = try XCTUnwrap(try p.alice.store.deliveredReceiptsOwed(contact: p.sam, after: nil, limit: 1).first?.position)
        try p.alice.store.transaction { tx in try tx.settleDeliveredReceipts(contact: p.sam, through: mark) }
        let ids = try arrive(5, p)
        context.durable = false
        let receipts = Receipts()
        try receipts.flush(context: context)
        XCTAssertTrue(context.sent.isEmpty, "stored, not yet durable: no receipt may say it arrived")

        // The first two were a batch that is durable now (what this run stored, held in
        // memory); the other three wait for the disk still.
        p.channel.storedThisRun.stored(Array(try p.alice.store.deliveredReceiptsOwed(contact: p.sam, after: nil, limit: 10).prefix(2)))
        try receipts.flush(context: context)
        XCTAssertEqual(try opened(context, p).map(\.ids), [Array(ids.prefix(2))])

        context.durable = true
        try receipts.flush(context: context)
        XCTAssertEqual(try opened(context, p).map(\.ids), [Array(ids.prefix(2)), Array(ids.suffix(3))], "the rest, from the store, after those")
    }

    func testNothingGoesWhenTheRunSendsNoReceiptsAndTheScheduleIsCleared() throws {
        let (p, context) = try pairAndContext()
        try arrive(3, p)
        context.sendsReceipts = false
        let receipts = Receipts()
        receipts.schedule(urgent: true, context: context)
        try receipts.flush(context: context)
        XCTAssertFalse(try receipts.sendSlotFrame(p.channel, context: context))
        XCTAssertTrue(context.sent.isEmpty)
        XCTAssertNil(receipts.due)
    }

    func testAPacedChannelWaitsForItsSlotAndSendsOneFrameThere() throws {
        let (p, context) = try pairAndContext()
        let ids = try arrive(2_000, p)
        try p.alice.store.transaction { tx in try tx.oweReadReceipts(contact: p.sam, ids: Array(ids.prefix(1))) }
        context.pace = true
        let receipts = Receipts()
        try receipts.flush(context: context)
        XCTAssertTrue(context.sent.isEmpty)
        XCTAssertTrue(p.channel.slotWaiting.receipts, "waits for the slot's end")

        XCTAssertTrue(try receipts.sendSlotFrame(p.channel, context: context))
        XCTAssertTrue(try receipts.sendSlotFrame(p.channel, context: context))
        XCTAssertTrue(try receipts.sendSlotFrame(p.channel, context: context))
        XCTAssertFalse(try receipts.sendSlotFrame(p.channel, context: context), "nothing more owed")
        XCTAssertEqual(try opened(context, p).map(\.ids.count), [1_024, 976, 1], "one frame per slot, Delivered first")
    }

    func testARelayWithoutRoomTakesNothingAndTheRestWaits() throws {
        let (p, context) = try pairAndContext()
        let ids = try arrive(1_500, p)
        context.room = 1
        let receipts = Receipts()
        XCTAssertEqual(try receipts.send(p.channel, frames: nil, context: context).sent, 1)
        XCTAssertTrue(try opened(context, p).map(\.ids) == [Array(ids.prefix(1_024))], "the first frame's worth")
        // Room again (`backlogDrained`): from where the frames in flight reach.
        context.room = .max
        XCTAssertEqual(try receipts.send(p.channel, frames: nil, context: context).sent, 1)
        XCTAssertTrue(try opened(context, p).last?.ids == Array(ids.suffix(476)), "the rest, after the frame in flight")
    }
}
