import XCTest
import RChatCore
@testable import RChatCrypto

final class ConversationSavedStateTests: XCTestCase {
    let pair = ConvPair.make(1)
    let t0: Int64 = 1_800_000_000
    lazy var alice = pair.initiator.conversation(with: pair.responder)
    lazy var bob = pair.responder.conversation(with: pair.initiator)

    private func assertSame(_ a: SavedSessionState, _ b: SavedSessionState, _ name: String, line: UInt = #line) {
        XCTAssertEqual(a.reconnectCounter, b.reconnectCounter, name, line: line)
        XCTAssertEqual(a.current?.id, b.current?.id, name, line: line)
        XCTAssertEqual(a.current?.role, b.current?.role, name, line: line)
        XCTAssertEqual(a.current?.nextSendSequence, b.current?.nextSendSequence, name, line: line)
        XCTAssertEqual(a.current?.startedAt, b.current?.startedAt, name, line: line)
        XCTAssertEqual(a.older.map(\.id), b.older.map(\.id), name, line: line)
        XCTAssertEqual(a.older.map(\.role), b.older.map(\.role), name, line: line)
        XCTAssertEqual(a.older.map(\.retiredAt), b.older.map(\.retiredAt), name, line: line)
        // Every key and ratchet field, byte for byte.
        XCTAssertEqual(a.serialized(), b.serialized(), name, line: line)
    }

    private func send(_ s: inout SavedSessionState, _ n: Int = 1) {
        for _ in 0..<n { XCTAssertNotNil(s.seal(kind: .cover, messageID: .random(), body: [], conversation: alice)) }
    }

    private func state(sessions: Int, endLast: Bool = false, sends: Int = 0) throws -> SavedSessionState {
        var s = SavedSessionState()
        for n in 0..<sessions {
            s.begin(try pair.handshake(initiatorCounter: s.reconnectCounter, responderCounter: s.reconnectCounter).0, at: t0 + Int64(n) * 3600)
        }
        send(&s, sends)
        if endLast { s.endCurrent(at: t0 + 999_999) }
        return s
    }

    func testRoundTrip() throws {
        // Bob's side with skipped keys: Alice sent three, the third came first.
        let (a, b) = try pair.handshake()
        var alices = a.started, bobs = b.started
        let frames = (0..<3).map { _ in alices.seal(kind: .message, messageID: .random(), body: [1], conversation: alice)! }
        _ = try bobs.open(frames[2], header: try Envelope.openHeader(frames[2], conversation: bob), at: t0)
        XCTAssertEqual(bobs.current?.skippedKeys, 2)
        let cases: [(name: String, state: SavedSessionState)] = [
            ("empty", SavedSessionState()),
            ("counter only", SavedSessionState(reconnectCounter: 41)),
            ("one session", try state(sessions: 1)),
            ("one session, three sent", try state(sessions: 1, sends: 3)),
            ("four sessions", try state(sessions: 4, sends: 1)),
            ("link gone", try state(sessions: 2, endLast: true)),
            ("skipped keys held", bobs),
        ]
        for c in cases {
            var bytes = c.state.serialized()
            XCTAssertEqual(bytes.first, SavedSessionState.formatVersion, c.name)
            let back = try SavedSessionState(serialized: bytes)
            assertSame(c.state, back, c.name)
            wipe(&bytes)
        }
        // Restored, Bob's state still opens the two skipped ones, once each.
        var restored = try SavedSessionState(serialized: bobs.serialized())
        for frame in frames.prefix(2) {
            let header = try Envelope.openHeader(frame, conversation: bob)
            XCTAssertEqual(try restored.open(frame, header: header, at: t0), [1])
            XCTAssertThrowsError(try restored.open(frame, header: header, at: t0)) { XCTAssertEqual($0 as? EnvelopeError, .replayed) }
        }
        XCTAssertEqual(restored.current?.skippedKeys, 0)
    }

    func testBeginRetiresTheCurrentSessionAndTakesTheAgreedCounter() throws {
        var s = SavedSessionState()
        let (first, _) = try pair.handshake(initiatorCounter: 0, responderCounter: 0)
        s.begin(first, at: t0)
        XCTAssertEqual(s.reconnectCounter, 1)
        send(&s, 2)
        XCTAssertEqual(s.current?.nextSendSequence, 2)
        let (second, _) = try pair.handshake(initiatorCounter: 1, responderCounter: 1)
        s.begin(second, at: t0 + 60)
        XCTAssertEqual(s.reconnectCounter, 2)
        XCTAssertEqual(s.current?.nextSendSequence, 0, "each session numbers from 0")
        XCTAssertEqual(s.older.map(\.id), [first.id])
        XCTAssertEqual(s.older.map(\.retiredAt), [t0 + 60])
        XCTAssertEqual(s.sendingSessionID, second.id)
        s.endCurrent(at: t0 + 120)
        XCTAssertNil(s.current)
        XCTAssertFalse(s.canSeal)
        XCTAssertNil(s.seal(kind: .cover, messageID: .random(), body: [], conversation: alice))
        XCTAssertEqual(s.older.map(\.id), [first.id, second.id], "both still receive")
    }

    /// A responder's new session is unconfirmed: the previous one, which the peer surely
    /// holds, keeps sending (its own numbering and ratchet) until the peer's first frame in
    /// the new one.
    func testAnUnconfirmedSessionSendsInThePreviousOneUntilConfirmed() throws {
        var s = SavedSessionState()
        let (first, _) = try pair.handshake(initiatorCounter: 0, responderCounter: 0)
        s.begin(first, at: t0)
        send(&s, 2)
        let (second, _) = try pair.handshake(initiatorCounter: 1, responderCounter: 1)
        s.begin(second, at: t0 + 60, confirmed: false)
        XCTAssertEqual(s.current?.id, second.id)
        XCTAssertEqual(s.sendingSessionID, first.id, "still the previous session")
        let frame = try XCTUnwrap(s.seal(kind: .cover, messageID: .random(), body: [], conversation: alice))
        let header = try Envelope.openHeader(frame, conversation: bob)
        XCTAssertEqual(header.sessionID, first.id)
        XCTAssertEqual(header.sequence, 2, "its numbering goes on")
        XCTAssertEqual(header.ratchet?.number, 2, "and its ratchet: no key twice")
        // Not saved: after a restart the state holds no unconfirmed sending.
        let restored = try SavedSessionState(serialized: s.serialized())
        XCTAssertNil(restored.sendingUntilConfirmed)
        XCTAssertEqual(restored.sendingSessionID, second.id)

        // Another answer before any confirmation: still the first session sends.
        let (third, _) = try pair.handshake(initiatorCounter: 2, responderCounter: 2)
        var twice = s
        twice.begin(third, at: t0 + 90, confirmed: false)
        XCTAssertEqual(twice.sendingSessionID, first.id, "not the unconfirmed session it replaced")

        s.confirm()
        XCTAssertEqual(s.sendingSessionID, second.id)
        XCTAssertEqual(s.current?.nextSendSequence, 0, "the new session numbers from 0")
        // Without a previous session there is nothing else to send in.
        var fresh = SavedSessionState()
        fresh.begin(first, at: t0, confirmed: false)
        XCTAssertEqual(fresh.sendingSessionID, first.id)
        // The link going away ends both.
        s.begin(try pair.handshake(initiatorCounter: 3, responderCounter: 3).0, at: t0 + 120, confirmed: false)
        s.endCurrent(at: t0 + 180)
        XCTAssertNil(s.sendingSessionID)
        XCTAssertFalse(s.canSeal)
    }

    func testPruningAt72Hours() throws {
        let retired = t0 + 3600
        let cases: [(name: String, now: Int64, kept: Bool)] = [
            ("just retired", retired, true),
            ("72 h − 1 s", retired + 72 * 3600 - 1, true),
            ("72 h exactly", retired + 72 * 3600, true),
            ("72 h + 1 s", retired + 72 * 3600 + 1, false),
            ("a week", retired + 7 * 86_400, false),
        ]
        for c in cases {
            var s = try state(sessions: 2)   // session 0 retired at t0 + 3600
            XCTAssertEqual(s.older.map(\.retiredAt), [retired])
            s.prune(now: c.now)
            XCTAssertEqual(s.older.count, c.kept ? 1 : 0, c.name)
            XCTAssertNotNil(s.current, "the current session is never pruned")
        }
    }

    /// A frame the relay held across a reconnect still opens from restored state, until the
    /// 72 h are up.
    func testHeldFrameOpensFromRestoredStateUntilPruned() throws {
        var bobState = SavedSessionState()
        let (a1, b1) = try pair.handshake()
        bobState.begin(b1, at: t0)
        var alices = a1.started
        let held = try XCTUnwrap(alices.seal(kind: .message, messageID: .random(), body: [7], conversation: alice))
        let (_, b2) = try pair.handshake(initiatorCounter: 1, responderCounter: 1)
        bobState.begin(b2, at: t0 + 10)

        var restored = try SavedSessionState(serialized: bobState.serialized())
        var pruned = restored
        let header = try Envelope.openHeader(held, conversation: bob)
        XCTAssertEqual(try restored.open(held, header: header, at: t0 + 20), [7])
        pruned.prune(now: t0 + 10 + SavedSessionState.retention + 1)
        XCTAssertThrowsError(try pruned.open(held, header: header, at: t0 + 20)) {
            XCTAssertEqual($0 as? EnvelopeError, .wrongSession)
        }
    }

    /// A state written before the ratchet (format 1) reads: its sessions only receive, and a
    /// frame of version 2 the relay held under one still opens.
    func testAStateFromBeforeTheRatchetStillReadsWhatTheRelayHeld() throws {
        let (a, b) = try pair.handshake()
        var w = ByteWriter()
        w.u8(1); w.u64(7)
        w.u8(1)   // its current session
        w.raw(b.keys.sessionID); w.u8(b.keys.role.rawValue); w.raw(b.keys.sendKey.testBytes); w.raw(b.keys.receiveKey.testBytes)
        w.u64(4); w.u64(UInt64(t0))
        w.u32(0)
        var old = try SavedSessionState(serialized: w.bytes)
        XCTAssertEqual(old.reconnectCounter, 7)
        XCTAssertNil(old.current, "a restart begins a new session anyway")
        XCTAssertEqual(old.older.map(\.id), [b.id])
        XCTAssertFalse(old.canSeal, "a session from before the ratchet never sends again")
        let header = EnvelopeHeader(kind: .message, messageID: .random(), sequence: 3, sessionID: a.id, ratchet: nil)
        let frame = Envelope.seal(header, body: [9, 9], key: a.keys.sendKey, senderRole: .initiator, conversation: alice)
        XCTAssertEqual(frame.first, Envelope.legacyVersion)
        let opened = try Envelope.openHeader(frame, conversation: bob)
        XCTAssertNil(opened.ratchet)
        XCTAssertEqual(try old.open(frame, header: opened, at: t0), [9, 9])
        // Written again, it is format 2 and still reads the held frame.
        var again = try SavedSessionState(serialized: old.serialized())
        XCTAssertEqual(old.serialized().first, SavedSessionState.formatVersion)
        XCTAssertEqual(try again.open(frame, header: opened, at: t0), [9, 9])
        XCTAssertEqual(again.legacyReceiveKeys.map(\.sessionID), [b.id])
    }

    func testRefusesOtherVersionsAndDamagedBytes() throws {
        let good = try state(sessions: 3, sends: 2).serialized()
        var future = good; future[0] = 3
        var badRole = good; badRole[1 + 8 + 1 + 16] = 9
        var badFlag = good; badFlag[1 + 8] = 7
        var hugeCount = SavedSessionState(reconnectCounter: 1).serialized()
        hugeCount.replaceSubrange(hugeCount.count - 4..<hugeCount.count, with: [0xff, 0xff, 0xff, 0xff])
        let cases: [(name: String, bytes: [UInt8], error: SavedSessionStateError)] = [
            ("empty", [], .malformed),
            ("future version", future, .unsupportedVersion(3)),
            ("version 0", [0] + good.dropFirst(), .unsupportedVersion(0)),
            ("trailing byte", good + [0], .malformed),
            ("bad role", badRole, .malformed),
            ("bad current flag", badFlag, .malformed),
            ("count beyond the data", hugeCount, .malformed),
        ]
        for c in cases {
            XCTAssertThrowsError(try SavedSessionState(serialized: c.bytes), c.name) {
                XCTAssertEqual($0 as? SavedSessionStateError, c.error, c.name)
            }
        }
        for length in 0..<good.count {
            XCTAssertThrowsError(try SavedSessionState(serialized: Array(good.prefix(length))), "cut at \(length)")
        }
    }
}
