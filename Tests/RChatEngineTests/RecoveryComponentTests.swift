import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatStore
@testable import RChatEngine

/// The recovery component alone: a real store and channel, and a stand-in for the rest of the
/// engine (`RecoveryContext`) that records the frames sent and the frames rejected instead of
/// giving them to a relay and a log.
final class RecoveryComponentTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-recovery-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    private final class Context: RecoveryContext {
        let store: Store
        let manual: ManualClock
        var clock: any Clock { manual }
        var now: Int64 { manual.now() }
        var ticks: Double = 100
        let noticeSigningKey: SigningKey
        let log = Logger.discarding
        /// Envelopes the relay takes before the link fails.
        var room = Int.max
        var sent: [[UInt8]] = []
        var rejected: [String] = []

        init(store: Store, clock: ManualClock, device: SigningKey) {
            self.store = store
            manual = clock
            noticeSigningKey = device
        }

        func sendOnLink(_ channel: PairwiseChannel, _ frame: LinkFrame, as completion: RelayCompletion, flush: Bool) throws -> UInt64 {
            guard case .envelope(let envelope) = frame else { throw EngineError.io("not an envelope") }
            guard room > 0 else { throw EngineError.io("no link") }
            room -= 1
            sent.append(envelope)
            return UInt64(sent.count)
        }

        func rejectForged(_ what: String) { rejected.append(what) }
    }

    /// Alice's channel to Sam in a session, and what Sam needs to read Alice's frames and to
    /// sign notices of his own.
    @dynamicMemberLookup
    private struct Fixture {
        let session: ChannelInSession
        let context: Context
        var sessionID: [UInt8] { session.samSession.id }
        subscript<T>(dynamicMember path: KeyPath<ChannelInSession, T>) -> T { session[keyPath: path] }
    }

    private static let start: Int64 = 1_800_000_000

    /// `peerHolds`: Sam is known to hold the session (`ChannelInSession`).
    private func fixture(peerHolds: Bool = true) throws -> Fixture {
        let clock = ManualClock(Self.start)
        let s = try ChannelInSession(in: directory, clock: clock, at: Self.start, peerHolds: peerHolds)
        return Fixture(session: s, context: Context(store: s.alice.store, clock: clock, device: s.alice.device))
    }

    /// `count` messages from Sam that Alice could not read. Their ids.
    private func unreadable(_ count: Int, _ f: Fixture) throws -> [MessageID] {
        let ids = (0..<count).map { _ in MessageID.random() }
        try f.alice.store.transaction { tx in
            for id in ids { _ = try tx.recordUndecryptable(contact: f.sam, id: id, session: f.sessionID, at: Self.start) }
        }
        return ids
    }

    /// The notices Sam reads in what Alice sent, each checked against Alice's device key.
    private func notices(_ f: Fixture) throws -> [CouldNotReadNotice] {
        try f.context.sent.map { envelope in
            let header = try Envelope.openHeader(envelope, conversation: f.samSecret)
            XCTAssertEqual(header.kind, .notice)
            let body = try f.samSession.open(envelope, header: header)
            return try CouldNotReadNotice.open(body, conversation: f.samSecret, session: header.sessionID,
                                               signedBy: f.context.noticeSigningKey.publicKey)
        }
    }

    /// A notice from Sam naming `ids`, as Alice receives it.
    private func samsNotice(_ ids: [MessageID], _ f: Fixture, signedBy key: SigningKey? = nil) -> [UInt8] {
        CouldNotReadNotice(messageIDs: ids, conversation: f.samSecret, session: f.sessionID, time: f.context.now)
            .signed(by: key ?? f.samDevice)
    }

    @discardableResult
    private func receive(_ body: [UInt8], _ f: Fixture) throws -> Engine.AfterCommit {
        var after = Engine.AfterCommit()
        try f.alice.store.transaction { tx in
            try Recovery.receiveNotice(body, in: f.channel, sealedIn: f.sessionID, tx, &after, context: f.context)
        }
        return after
    }

    /// One message Alice sent Sam, taken by the relay `ago` seconds before the session began.
    private func sentMessage(_ f: Fixture, ago: Int64 = 100) throws -> MessageID {
        let id = MessageID.random(), contact = try XCTUnwrap(try f.alice.store.contact(named: "Sam"))
        try f.alice.store.transaction { tx in
            try tx.insertOutgoing(contact: f.sam, id: id, content: .text("hello"), at: Self.start - ago,
                                  keysFingerprint: AccountService.keysFingerprint(contact))
            _ = try tx.raiseStatus(contact: f.sam, id: id, event: .relayAcknowledged, at: Self.start - ago)
        }
        return id
    }

    private func rows(_ kind: SystemRowKind, _ f: Fixture) throws -> [StoredSystemRow] {
        try f.alice.store.conversation(contact: f.sam, limit: 1_000).compactMap {
            if case .row(let row) = $0, row.kind == kind { return row } else { return nil }
        }
    }

    // MARK: sending notices

    func testANoticeIsSplitAtItsLargestAndEachIdGoesOnce() throws {
        let f = try fixture()
        let ids = try unreadable(CouldNotReadNotice.maxMessageIDs + 1, f)
        try Recovery.sendNoticeIfNeeded(f.channel, context: f.context)
        let sent = try notices(f)
        XCTAssertEqual(sent.map(\.messageIDs.count), [CouldNotReadNotice.maxMessageIDs, 1])
        XCTAssertEqual(Set(sent.flatMap(\.messageIDs)), Set(ids))
        XCTAssertEqual(sent.map(\.sessionID), [f.sessionID, f.sessionID])
        XCTAssertEqual(f.channel.traffic.noticeInFlight, Set(ids))
        // In flight: not sent again until the relay answers.
        try Recovery.sendNoticeIfNeeded(f.channel, context: f.context)
        XCTAssertEqual(f.context.sent.count, 2)
    }

    func testNothingGoesInASessionTheContactDoesNotHold() throws {
        let f = try fixture(peerHolds: false)
        let ids = try unreadable(3, f)
        f.channel.recovery.startedOverNoticeOwed = true
        try Recovery.sendNoticeIfNeeded(f.channel, context: f.context)
        XCTAssertTrue(f.context.sent.isEmpty)
        XCTAssertTrue(f.channel.traffic.noticeInFlight.isEmpty)
        XCTAssertFalse(f.channel.traffic.startedOverNoticeInFlight)
        // Sam showed he holds it: the notice goes.
        f.channel.saved?.confirm()
        try Recovery.sendNoticeIfNeeded(f.channel, context: f.context)
        XCTAssertEqual(try notices(f).map { Set($0.messageIDs) }, [Set(ids)])
        XCTAssertTrue(f.channel.traffic.startedOverNoticeInFlight)
    }

    func testATakenNoticeIsRecordedAndARefusedOneGoesAgain() throws {
        let f = try fixture()
        let ids = try unreadable(CouldNotReadNotice.maxMessageIDs + 2, f)
        try Recovery.sendNoticeIfNeeded(f.channel, context: f.context)
        let sent = try notices(f)
        let first = sent[0].messageIDs, second = sent[1].messageIDs
        var events: [ChatEvent] = []
        try f.alice.store.transaction { tx in try Recovery.noticeTaken(first, on: f.channel, tx, &events, context: f.context) }
        XCTAssertEqual(Set(try f.alice.store.undecryptable(contact: f.sam, notified: false).map(\.id)), Set(second))
        XCTAssertEqual(try rows(.couldNotDecrypt, f).map { Set($0.messageIDs) }, [Set(first)])
        XCTAssertEqual(events, [.rowAdded(conversation: f.sam.conversation)])
        XCTAssertEqual(f.channel.traffic.noticeInFlight, Set(second))
        Recovery.noticeRefused(second, on: f.channel)
        XCTAssertTrue(f.channel.traffic.noticeInFlight.isEmpty)
        try Recovery.sendNoticeIfNeeded(f.channel, context: f.context)
        XCTAssertEqual(try notices(f).dropFirst(2).map { Set($0.messageIDs) }, [Set(second)])
        XCTAssertEqual(Set(ids), Set(first + second))
    }

    func testAStartedOverNoticeGoesEmptyAndIsOwedUntilTheRelayTakesIt() throws {
        let f = try fixture()
        f.channel.recovery.startedOverNoticeOwed = true
        // The link fails: still owed, nothing in flight.
        f.context.room = 0
        try Recovery.sendNoticeIfNeeded(f.channel, context: f.context)
        XCTAssertFalse(f.channel.traffic.startedOverNoticeInFlight)
        f.context.room = .max
        try Recovery.sendNoticeIfNeeded(f.channel, context: f.context)
        XCTAssertEqual(try notices(f).map(\.messageIDs), [[]])
        XCTAssertTrue(f.channel.traffic.startedOverNoticeInFlight)
        var events: [ChatEvent] = []
        try f.alice.store.transaction { tx in try Recovery.noticeTaken([], on: f.channel, tx, &events, context: f.context) }
        XCTAssertFalse(f.channel.recovery.startedOverNoticeOwed)
        XCTAssertFalse(try f.alice.store.recoveryFlags(contact: f.sam).startedOverNoticeOwed)
        XCTAssertTrue(events.isEmpty)
        try Recovery.sendNoticeIfNeeded(f.channel, context: f.context)
        XCTAssertEqual(f.context.sent.count, 1)
    }

    func testASessionBeganStoresWhoStartedOver() throws {
        let f = try fixture()
        try f.alice.store.transaction { tx in
            try Recovery.sessionBegan(f.channel, hadState: true, peerStartedOver: true, tx)
        }
        XCTAssertEqual(try f.alice.store.recoveryFlags(contact: f.sam), RecoveryFlags(startedOverNoticeOwed: false, peerStartedOver: true))
        try f.alice.store.transaction { tx in
            try Recovery.sessionBegan(f.channel, hadState: false, peerStartedOver: false, tx)
        }
        // What the peer showed is kept until its notice comes.
        XCTAssertEqual(try f.alice.store.recoveryFlags(contact: f.sam), RecoveryFlags(startedOverNoticeOwed: true, peerStartedOver: true))
    }

    // MARK: receiving notices

    func testANoticeNotSignedByTheirDeviceChangesNothingAndOneIsReadOnce() throws {
        let f = try fixture()
        let id = try sentMessage(f)
        try receive(samsNotice([id], f, signedBy: .generate()), f)
        XCTAssertEqual(f.context.rejected, ["a could-not-read notice from Sam not signed by their device key"])
        XCTAssertEqual(try f.alice.store.message(contact: f.sam, id: id)?.status, .sent)
        XCTAssertTrue(try rows(.resentAutomatically, f).isEmpty)

        // Signed by Sam's pinned device, within the 72 hours, keys unchanged: resent by itself.
        let body = samsNotice([id], f)
        let after = try receive(body, f)
        XCTAssertEqual(try f.alice.store.message(contact: f.sam, id: id)?.status, .sending)
        XCTAssertEqual(try rows(.resentAutomatically, f).map(\.messageIDs), [[id]])
        XCTAssertTrue(after.resendQueued.first === f.channel)
        XCTAssertEqual(f.context.rejected.count, 1)

        // The relay delivers it again: nothing more.
        let again = try receive(body, f)
        XCTAssertEqual(f.context.rejected.last, "a could-not-read notice from Sam read already")
        XCTAssertTrue(again.events.isEmpty && again.resendQueued.isEmpty)
        XCTAssertEqual(try rows(.resentAutomatically, f).count, 1)
    }

    func testANoticeForAnotherSessionIsRefused() throws {
        let f = try fixture()
        let id = try sentMessage(f)
        let other = CouldNotReadNotice(messageIDs: [id], conversation: f.samSecret, session: [UInt8](repeating: 7, count: 16),
                                       time: f.context.now).signed(by: f.samDevice)
        try receive(other, f)
        XCTAssertEqual(f.context.rejected, ["a could-not-read notice from Sam written for another session than it came in"])
        XCTAssertEqual(try f.alice.store.message(contact: f.sam, id: id)?.status, .sent)
    }

    func testTheStartedOverRowAppearsOnce() throws {
        let f = try fixture()
        let id = try sentMessage(f)
        // Sent after the new session began: it can be read there, and is not counted.
        let later = MessageID.random()
        try f.alice.store.transaction { tx in
            try tx.insertOutgoing(contact: f.sam, id: later, content: .text("later"), at: Self.start + 10)
            _ = try tx.raiseStatus(contact: f.sam, id: later, event: .relayAcknowledged, at: Self.start + 10)
        }
        f.context.manual.advance(60)
        f.channel.recovery.peerStartedOver = true
        let after = try receive(samsNotice([], f), f)
        let row = try XCTUnwrap(try rows(.startedOver, f).first)
        XCTAssertEqual(row.messageIDs, [id])
        XCTAssertEqual(row.action, .resend)
        XCTAssertEqual(after.events, [.rowAdded(conversation: f.sam.conversation)])
        XCTAssertFalse(f.channel.recovery.peerStartedOver)
        XCTAssertFalse(try f.alice.store.recoveryFlags(contact: f.sam).peerStartedOver)
        // Another empty notice (a new one, not a replay): no second row.
        f.context.manual.advance(1)
        try receive(samsNotice([], f), f)
        XCTAssertTrue(f.context.rejected.isEmpty)
        XCTAssertEqual(try rows(.startedOver, f).count, 1)
        XCTAssertEqual(try f.alice.store.message(contact: f.sam, id: id)?.status, .sent)
    }
}
