import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatStore
import RChatRelayClient
import RChatWire
@testable import RChatEngine

/// The transfers component alone: a real store and channel, and a stand-in for the rest of
/// the engine (`TransfersContext`) that records the frames sent instead of giving them to a relay.
final class TransfersTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-transfers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    private final class Context: TransfersContext {
        let store: Store
        let clock: any Clock = SystemClock()
        var now: Int64 { clock.now() }
        var ticks: Double = 100
        let log = Logger.discarding
        let home: String
        var maxIncomingMB = 100
        var pace = false
        var forged: [String] = []
        var events: [ChatEvent] = []
        var sent: [[UInt8]] = []

        init(store: Store, home: String) {
            self.store = store
            self.home = home
        }

        func keepsPace(_ channel: PairwiseChannel) -> Bool { pace }
        func isConnected(_ channel: PairwiseChannel) -> Bool { true }
        func rejectForged(_ what: String) { forged.append(what) }
        func storeSession(of channel: PairwiseChannel) throws(EngineError) {}
        func emit(_ event: ChatEvent) { events.append(event) }
        func storeIncoming(_ after: inout Engine.AfterCommit, _ tx: StoreTransaction) throws {}

        func sendOnLink(_ channel: PairwiseChannel, _ frame: LinkFrame, as completion: RelayCompletion, flush: Bool) throws -> UInt64 {
            guard case .envelope(let envelope) = frame else { throw EngineError.io("not an envelope") }
            sent.append(envelope)
            return UInt64(sent.count)
        }
    }

    private func setUp() throws -> (ChannelInSession, Context) {
        let p = try ChannelInSession(in: directory, at: 1_000)
        return (p, Context(store: p.alice.store, home: p.alice.locations.home))
    }

    /// What Sam reads in each progress report Alice sent: the chunk count.
    private func reports(_ context: Context, _ p: ChannelInSession) throws -> [UInt32] {
        try context.sent.map { envelope in
            let header = try Envelope.openHeader(envelope, conversation: p.samSecret)
            XCTAssertEqual(header.kind, .fileProgress)
            var r = ByteReader(try p.samSession.open(envelope, header: header))
            return try r.u32()
        }
    }

    func testProgressIsReportedEveryThirtyTwoChunksAndWhenWhole() throws {
        let (p, context) = try setUp()
        let transfers = Transfers(), row = MessageRowID(7), id = MessageID.random()
        for chunks in 1...70 { transfers.reportFileProgress(row, id, chunks, complete: false, p.channel, context: context) }
        XCTAssertEqual(try reports(context, p), [32, 64])
        transfers.reportFileProgress(row, id, 71, complete: true, p.channel, context: context)
        XCTAssertEqual(try reports(context, p), [32, 64, 71], "whole: at once")
        XCTAssertNil(transfers.progressReported[row], "nothing more to report of a whole file")
    }

    func testAtTheSteadyPaceAReportWaitsForASlotOneAtATime() throws {
        let (p, context) = try setUp()
        context.pace = true
        let transfers = Transfers(), id = MessageID.random()
        transfers.reportFileProgress(MessageRowID(1), id, 32, complete: false, p.channel, context: context)
        transfers.reportFileProgress(MessageRowID(2), id, 5, complete: true, p.channel, context: context)
        XCTAssertTrue(context.sent.isEmpty, "they wait for the slot's end")
        XCTAssertTrue(p.channel.slotWaiting.receipts)
        XCTAssertTrue(transfers.sendProgressOwed(p.channel, one: true, context: context))
        XCTAssertEqual(try reports(context, p), [32], "one per slot, the oldest file first")
        XCTAssertTrue(transfers.sendProgressOwed(p.channel, one: false, context: context))
        XCTAssertEqual(try reports(context, p), [32, 5])
        XCTAssertFalse(transfers.sendProgressOwed(p.channel, one: false, context: context), "nothing left owed")
    }

    func testARefusalForNoFileSentIsRejectedAsForgedAndWritesNothing() throws {
        let (p, context) = try setUp()
        var after = Engine.AfterCommit()
        var body = ByteWriter(capacity: 9)
        body.u8(1)
        body.u64(5)
        try p.alice.store.transaction { tx in
            try Transfers().fileRefused(body.bytes, id: .random(), in: p.channel, tx, &after, context: context)
        }
        XCTAssertEqual(context.forged.count, 1)
        XCTAssertTrue(after.events.isEmpty)
    }

    /// A file's chunks asked for in any order (members of a group at different places,
    /// resends, chunks the relay refused) are the bytes the stream makes in order: each is
    /// made again from the nearest state kept before it.
    func testChunksAskedForInAnyOrderAreTheBytesMadeInOrder() throws {
        let count = 5 * OutgoingStream.checkpointEvery + 7
        let size = UInt64(count - 1) * UInt64(FileStream.plainChunkBytes) + 1_000
        let path = directory.appendingPathComponent("sent.bin").path
        var g = SplitMix64(seed: 30)
        try Data((0..<Int(size)).map { _ in UInt8(truncatingIfNeeded: g.next()) }).write(to: URL(fileURLWithPath: path))
        let encryptor = FileStream.Encryptor(key: FileStream.generateKey())
        func stream() throws -> OutgoingStream {
            try OutgoingStream(file: OpenFile.openOwn(path, writable: false), size: size, header: encryptor.header, start: encryptor.stateBytes)
        }
        let inOrder = try stream()
        let expected = try (0..<count).map { try inOrder.chunk($0) }
        XCTAssertEqual(Set(expected).count, count, "every chunk differs")
        let scattered = try stream()
        var asked = Array(0..<count) + (0..<count).map { _ in Int(g.next() % UInt64(count)) }
        asked.shuffle(using: &g)
        for index in asked { XCTAssertTrue(try scattered.chunk(index) == expected[index], "chunk \(index)") }
        // Two members far apart, taking turns.
        let turns = try stream()
        for step in 0..<count { for index in [step, (step + count / 2) % count] { XCTAssertTrue(try turns.chunk(index) == expected[index], "chunk \(index)") } }
    }
}
