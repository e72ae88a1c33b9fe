import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatStore
import RChatRelayClient
import RChatWire
@testable import RChatEngine

/// The outbox component alone: a real store and channel, and a stand-in for the rest of the
/// engine (`OutboxContext`) that records the frames sent instead of giving them to a relay.
final class OutboxTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-outbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// A relay connection of which the outbox uses only its room and its flush (frames go
    /// through the context's `sendOnLink`); anything else it is asked fails the test.
    private final class Link: RelayLink, @unchecked Sendable {
        var room = Int.max
        var flushes = 0
        let mailbox = MailboxID(bytes: [UInt8](repeating: 7, count: 32))!
        func hasRoom() -> Bool { room > 0 }
        func flush() throws(RelayClientError) { flushes += 1 }
        func present(_ codes: [[UInt8]], flush: Bool) throws(RelayClientError) { XCTFail("present") }
        func registerInvites(salts: [[UInt8]], flush: Bool) throws(RelayClientError) -> [InviteToken] { XCTFail("invites"); return [] }
        func moveMailbox(from old: SigningKey, flush: Bool) throws(RelayClientError) { XCTFail("move") }
        func send(on link: LinkID, _ payload: [UInt8], ahead: Bool, flush: Bool) throws(RelayClientError) -> UInt64 { XCTFail("send"); return 0 }
        func sendRequest(to token: InviteToken, _ payload: [UInt8], flush: Bool) throws(RelayClientError) -> UInt64 { XCTFail("request"); return 0 }
        func acknowledge(_ ids: [HeldItemID], flush: Bool) throws(RelayClientError) { XCTFail("acknowledge") }
        func ping(_ value: UInt64) throws(RelayClientError) { XCTFail("ping") }
        func leave(_ link: LinkID) throws(RelayClientError) { XCTFail("leave") }
        func close() { XCTFail("close") }
    }

    private final class Context: OutboxContext {
        let store: Store
        let clock: any Clock
        var ticks: Double = 100
        let log = Logger.discarding
        var sendsMessages = true
        var acknowledgementSeconds: Double = 30
        let link = Link()
        var sent: [[UInt8]] = []
        var events: [ChatEvent] = []
        var waitsNoted = 0
        var now: Int64 { clock.now() }
        let ownContactCode = "code"

        init(store: Store, clock: any Clock) {
            self.store = store
            self.clock = clock
        }

        func keepsPace(_ channel: PairwiseChannel) -> Bool { false }
        func connectedRelay(_ address: RelayAddress) -> (any RelayLink)? { link }
        func sendRequest(_ request: MessageRequest, to contact: Contact, token: InviteToken, at address: RelayAddress,
                         as completion: RelayCompletion) -> Bool { false }
        func sendAttachment(_ item: OutboxItem, _ channel: PairwiseChannel, _ saved: inout SavedSessionState,
                            client: any RelayLink, deadline: Double, chunks: inout Int?) throws(EngineError) -> Bool { true }
        func noteUploadWaits(_ channel: PairwiseChannel, _ files: [MessageRowID]) { waitsNoted += 1 }
        var sessionsStored = 0
        func storeSession(of channel: PairwiseChannel) throws(EngineError) { sessionsStored += 1 }
        func emit(_ event: ChatEvent) { events.append(event) }

        func sendOnLink(_ channel: PairwiseChannel, _ frame: LinkFrame, as completion: RelayCompletion, flush: Bool) throws -> UInt64 {
            guard case .envelope(let envelope) = frame else { throw EngineError.io("not an envelope") }
            link.room -= 1
            sent.append(envelope)
            return UInt64(sent.count)
        }
    }

    private func setUp(messages: Int) throws -> (ChannelInSession, Context, [MessageID]) {
        let clock = ManualClock(1_000)
        let p = try ChannelInSession(in: directory, clock: clock, at: 1_000)
        let contact = try p.alice.contact(named: "Sam")
        let ids = try (0..<messages).map { _ in try p.alice.send(to: contact, content: .text("hello")) }
        return (p, Context(store: p.alice.store, clock: clock), ids)
    }

    /// What Sam reads: each frame's message id and text.
    private func opened(_ context: Context, _ p: ChannelInSession) throws -> [MessageID] {
        try context.sent.map { envelope in
            let header = try Envelope.openHeader(envelope, conversation: p.samSecret)
            _ = try p.samSession.open(envelope, header: header)
            return header.messageID
        }
    }

    func testWhatTheOutboxHoldsGoesInTheSessionOnceInOrderWithItsDeadline() throws {
        let (p, context, ids) = try setUp(messages: 3)
        let outbox = Outbox(startedAt: 100)
        XCTAssertFalse(try outbox.flush(p.channel, context: context), "no chunk went")
        XCTAssertEqual(try opened(context, p), ids, "each message sealed in the session, in order")
        XCTAssertEqual(context.link.flushes, 1, "one flush of the link for the lot")
        XCTAssertEqual(p.channel.earliestAcknowledgement, 130, "answered within the acknowledgement timeout")
        try outbox.flush(p.channel, context: context)
        XCTAssertEqual(context.sent.count, 3, "in flight: not sent again")
    }

    func testARelayWithoutRoomTakesWhatFitsAndTheRestGoesLater() throws {
        let (p, context, ids) = try setUp(messages: 5)
        context.link.room = 2
        let outbox = Outbox(startedAt: 100)
        try outbox.flush(p.channel, context: context)
        XCTAssertEqual(try opened(context, p), Array(ids.prefix(2)))
        context.link.room = 10
        try outbox.flush(p.channel, context: context)
        XCTAssertEqual(try opened(context, p), ids, "the rest after it, nothing twice")
    }

    func testNothingGoesToABlockedContactAndEachMessageIsFailedToSend() throws {
        let (p, context, ids) = try setUp(messages: 2)
        try p.alice.change("Sam", .block)
        p.channel.contact = try p.alice.contact(named: "Sam")
        try Outbox(startedAt: 100).flush(p.channel, context: context)
        XCTAssertTrue(context.sent.isEmpty)
        XCTAssertTrue(try p.alice.store.outbox(contact: p.sam).isEmpty, "left the outbox")
        let statuses = try p.alice.conversation("Sam").compactMap { item -> MessageStatus? in
            if case .message(let m) = item, ids.contains(m.id) { return m.status }
            return nil
        }
        XCTAssertEqual(statuses, [.failedToSend, .failedToSend])
        XCTAssertEqual(context.events.count, 2, "the view hears of each")
    }

    func testAPostponedMessageWaitsForItsBackoffOrANewSessionAndTheSweepComesBack() throws {
        let (p, context, ids) = try setUp(messages: 1)
        let row = try XCTUnwrap(try p.alice.store.outbox(contact: p.sam).first).message
        try p.alice.store.recordSendAttempt(message: row, session: nil, nextAttemptAt: 1_010)
        let outbox = Outbox(startedAt: 100)
        try outbox.flush(p.channel, context: context)
        XCTAssertTrue(context.sent.isEmpty, "not before its backoff")
        XCTAssertTrue(p.channel.backoffPending)
        XCTAssertEqual(outbox.nextDeadline(pending: true), 101, "the sweep a second after the last")
        XCTAssertEqual(outbox.nextDeadline(pending: false), .infinity)
        XCTAssertFalse(outbox.sweepDue(at: 100.5))
        XCTAssertTrue(outbox.sweepDue(at: 101))
        XCTAssertFalse(outbox.sweepDue(at: 101.5), "counted as done")
        try outbox.flush(p.channel, ignoringBackoff: true, context: context)
        XCTAssertEqual(try opened(context, p), ids, "a new session is a new attempt")
    }

    func testARunThatDoesNotSendSendsNothing() throws {
        let (p, context, _) = try setUp(messages: 1)
        context.sendsMessages = false
        try Outbox(startedAt: 100).flush(p.channel, context: context)
        XCTAssertTrue(context.sent.isEmpty)
        XCTAssertEqual(context.waitsNoted, 0)
    }
}
