import XCTest
import RChatCore
@testable import RChatCrypto

final class ConversationSavedStateTests: XCTestCase {
    let pair = ConvPair.make(1)
    let t0: Int64 = 1_800_000_000

    private func assertSameKeys(_ a: SavedSessionState, _ b: SavedSessionState, _ name: String, line: UInt = #line) {
        XCTAssertEqual(a.reconnectCounter, b.reconnectCounter, name, line: line)
        XCTAssertEqual(a.current?.keys.sessionID, b.current?.keys.sessionID, name, line: line)
        XCTAssertEqual(a.current?.keys.role, b.current?.keys.role, name, line: line)
        XCTAssertEqual(a.current?.keys.sendKey.testBytes, b.current?.keys.sendKey.testBytes, name, line: line)
        XCTAssertEqual(a.current?.keys.receiveKey.testBytes, b.current?.keys.receiveKey.testBytes, name, line: line)
        XCTAssertEqual(a.current?.nextSendSequence, b.current?.nextSendSequence, name, line: line)
        XCTAssertEqual(a.current?.startedAt, b.current?.startedAt, name, line: line)
        XCTAssertEqual(a.older.map(\.receiving.sessionID), b.older.map(\.receiving.sessionID), name, line: line)
        XCTAssertEqual(a.older.map(\.receiving.senderRole), b.older.map(\.receiving.senderRole), name, line: line)
        XCTAssertEqual(a.older.map(\.receiving.key.testBytes), b.older.map(\.receiving.key.testBytes), name, line: line)
        XCTAssertEqual(a.older.map(\.retiredAt), b.older.map(\.retiredAt), name, line: line)
    }

    private func state(sessions: Int, endLast: Bool = false, sends: Int = 0) throws -> SavedSessionState {
        var s = SavedSessionState()
        for n in 0..<sessions {
            s.begin(try pair.handshake(initiatorCounter: s.reconnectCounter, responderCounter: s.reconnectCounter).0, at: t0 + Int64(n) * 3600)
        }
        for _ in 0..<sends { _ = s.takeSendSequence() }
        if endLast { s.endCurrent(at: t0 + 999_999) }
        return s
    }

    func testRoundTrip() throws {
        let cases: [(name: String, state: SavedSessionState)] = [
            ("empty", SavedSessionState()),
            ("counter only", SavedSessionState(reconnectCounter: 41)),
            ("one session", try state(sessions: 1)),
            ("one session, three sent", try state(sessions: 1, sends: 3)),
            ("four sessions", try state(sessions: 4, sends: 1)),
            ("link gone", try state(sessions: 2, endLast: true)),
        ]
        for c in cases {
            var bytes = c.state.serialized()
            XCTAssertEqual(bytes.first, SavedSessionState.formatVersion, c.name)
            let back = try SavedSessionState(serialized: bytes)
            assertSameKeys(c.state, back, c.name)
            XCTAssertEqual(back.serialized(), bytes, c.name)
            wipe(&bytes)
        }
    }

    func testBeginRetiresTheCurrentSessionAndTakesTheAgreedCounter() throws {
        var s = SavedSessionState()
        let (first, _) = try pair.handshake(initiatorCounter: 0, responderCounter: 0)
        s.begin(first, at: t0)
        XCTAssertEqual(s.reconnectCounter, 1)
        XCTAssertEqual(s.takeSendSequence(), 0)
        XCTAssertEqual(s.takeSendSequence(), 1)
        let (second, _) = try pair.handshake(initiatorCounter: 1, responderCounter: 1)
        s.begin(second, at: t0 + 60)
        XCTAssertEqual(s.reconnectCounter, 2)
        XCTAssertEqual(s.takeSendSequence(), 0, "each session numbers from 0")
        XCTAssertEqual(s.older.map(\.receiving.sessionID), [first.id])
        XCTAssertEqual(s.older.map(\.retiredAt), [t0 + 60])
        XCTAssertEqual(s.receiveKeys.map(\.sessionID), [second.id, first.id])
        s.endCurrent(at: t0 + 120)
        XCTAssertNil(s.current)
        XCTAssertNil(s.takeSendSequence())
        XCTAssertEqual(s.receiveKeys.map(\.sessionID), [second.id, first.id])
    }

    /// A responder's new session is unconfirmed: the previous one, which the peer surely
    /// holds, keeps sending (its own numbering) until the peer's first frame in the new one.
    func testAnUnconfirmedSessionSendsInThePreviousOneUntilConfirmed() throws {
        var s = SavedSessionState()
        let (first, _) = try pair.handshake(initiatorCounter: 0, responderCounter: 0)
        s.begin(first, at: t0)
        XCTAssertEqual(s.takeSendSequence(), 0)
        XCTAssertEqual(s.takeSendSequence(), 1)
        let (second, _) = try pair.handshake(initiatorCounter: 1, responderCounter: 1)
        s.begin(second, at: t0 + 60, confirmed: false)
        XCTAssertEqual(s.current?.keys.sessionID, second.id)
        XCTAssertEqual(s.sendKeys?.sessionID, first.id, "still the previous session")
        XCTAssertEqual(s.takeSendSequence(), 2, "its numbering goes on: no nonce twice")
        XCTAssertEqual(s.receiveKeys.map(\.sessionID), [second.id, first.id])
        // Not saved: after a restart the state holds no unconfirmed sending.
        let restored = try SavedSessionState(serialized: s.serialized())
        XCTAssertNil(restored.sendingUntilConfirmed)
        XCTAssertEqual(restored.sendKeys?.sessionID, second.id)

        // Another answer before any confirmation: still the first session sends.
        let (third, _) = try pair.handshake(initiatorCounter: 2, responderCounter: 2)
        var twice = s
        twice.begin(third, at: t0 + 90, confirmed: false)
        XCTAssertEqual(twice.sendKeys?.sessionID, first.id, "not the unconfirmed session it replaced")
        XCTAssertEqual(twice.takeSendSequence(), 3)

        s.confirm()
        XCTAssertEqual(s.sendKeys?.sessionID, second.id)
        XCTAssertEqual(s.takeSendSequence(), 0, "the new session numbers from 0")
        // Without a previous session there is nothing else to send in.
        var fresh = SavedSessionState()
        fresh.begin(first, at: t0, confirmed: false)
        XCTAssertEqual(fresh.sendKeys?.sessionID, first.id)
        // The link going away ends both.
        s.begin(try pair.handshake(initiatorCounter: 3, responderCounter: 3).0, at: t0 + 120, confirmed: false)
        s.endCurrent(at: t0 + 180)
        XCTAssertNil(s.sendKeys)
        XCTAssertNil(s.takeSendSequence())
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
        let alice = pair.initiator.conversation(with: pair.responder), bob = pair.responder.conversation(with: pair.initiator)
        var bobState = SavedSessionState()
        let (a1, b1) = try pair.handshake()
        bobState.begin(b1, at: t0)
        let held = Envelope.seal(kind: .message, messageID: MessageID.random(), sequence: 0, body: [7], keys: a1.keys, conversation: alice)
        let (_, b2) = try pair.handshake(initiatorCounter: 1, responderCounter: 1)
        bobState.begin(b2, at: t0 + 10)

        var restored = try SavedSessionState(serialized: bobState.serialized())
        let header = try Envelope.openHeader(held, conversation: bob)
        XCTAssertEqual(try Envelope.openBody(held, header: header, keys: restored.receiveKeys), [7])
        restored.prune(now: t0 + 10 + SavedSessionState.retention + 1)
        XCTAssertThrowsError(try Envelope.openBody(held, header: header, keys: restored.receiveKeys)) {
            XCTAssertEqual($0 as? EnvelopeError, .wrongSession)
        }
    }

    func testRefusesOtherVersionsAndDamagedBytes() throws {
        let good = try state(sessions: 3, sends: 2).serialized()
        var future = good; future[0] = 2
        var badRole = good; badRole[1 + 8 + 1 + 16] = 9
        var badFlag = good; badFlag[1 + 8] = 7
        var hugeCount = SavedSessionState(reconnectCounter: 1).serialized()
        hugeCount.replaceSubrange(hugeCount.count - 4..<hugeCount.count, with: [0xff, 0xff, 0xff, 0xff])
        let cases: [(name: String, bytes: [UInt8], error: SavedSessionStateError)] = [
            ("empty", [], .malformed),
            ("future version", future, .unsupportedVersion(2)),
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
