import XCTest
import RChatCore
@testable import RChatCrypto

/// The Double Ratchet's properties (issue 32, DESIGN.md §18), through the saved state the
/// engine keeps: a key per envelope, a DH step at each change of direction, out of order
/// and lost frames within the bounds, replays that never open twice, and what a copy of one
/// side's whole state can and cannot open.
final class RatchetTests: XCTestCase {
    let pair = ConvPair.make(3)
    lazy var alice = pair.initiator.conversation(with: pair.responder)
    lazy var bob = pair.responder.conversation(with: pair.initiator)
    let t0: Int64 = 1_800_000_000

    /// Both sides of a fresh session.
    private func sides() throws -> (alice: SavedSessionState, bob: SavedSessionState) {
        let (a, b) = try pair.handshake()
        return (a.started, b.started)
    }

    private func text(_ n: Int) -> [UInt8] { MessageContent.text("message \(n)").encoded() }

    private func seal(_ from: inout SavedSessionState, _ n: Int, as conversation: ConversationSecret) throws -> [UInt8] {
        try XCTUnwrap(from.seal(kind: .message, messageID: .random(), body: text(n), conversation: conversation))
    }

    /// Opens a frame to `to` (its header with `conversation`), or the error.
    private func open(_ frame: [UInt8], by to: inout SavedSessionState, as conversation: ConversationSecret,
                      at now: Int64? = nil) -> Result<[UInt8], EnvelopeError> {
        do {
            let header = try Envelope.openHeader(frame, conversation: conversation)
            return .success(try to.open(frame, header: header, at: now ?? t0))
        } catch let error as EnvelopeError {
            return .failure(error)
        } catch {
            return .failure(.malformed)
        }
    }

    private func ratchetKey(_ frame: [UInt8], _ conversation: ConversationSecret) throws -> [UInt8] {
        try XCTUnwrap(try Envelope.openHeader(frame, conversation: conversation).ratchet).publicKey
    }

    func testEveryEnvelopeHasItsOwnKeyAndEachChangeOfDirectionADHStep() throws {
        var (a, b) = try sides()
        var aliceKeys: [[UInt8]] = [], bobKeys: [[UInt8]] = []
        for round in 0..<20 {
            // A run of 1 … 3 from each side.
            for n in 0...(round % 3) {
                let frame = try seal(&a, n, as: alice)
                aliceKeys.append(try ratchetKey(frame, bob))
                XCTAssertEqual(try open(frame, by: &b, as: bob).get(), text(n))
            }
            for n in 0...((round + 1) % 3) {
                let frame = try seal(&b, n, as: bob)
                bobKeys.append(try ratchetKey(frame, alice))
                XCTAssertEqual(try open(frame, by: &a, as: alice).get(), text(n))
            }
        }
        // One ratchet key per run, none twice, none shared.
        XCTAssertEqual(Set(aliceKeys).count, 20)
        XCTAssertEqual(Set(bobKeys).count, 20)
        XCTAssertTrue(Set(aliceKeys).isDisjoint(with: Set(bobKeys)))
    }

    /// Messages answered only by receipts take no DH step: the receipts ride Bob's chain as
    /// it is, so Alice's messages stay in one chain (a hash per envelope, no X25519); Bob's
    /// first reply takes the step he owes, and Alice's next message hers.
    func testReceiptsRideTheChainAndAReplyTakesTheStep() throws {
        var (a, b) = try sides()
        var aliceKeys: Set<[UInt8]> = [], bobKeys: Set<[UInt8]> = []
        for n in 0..<10 {
            let message = try seal(&a, n, as: alice)
            aliceKeys.insert(try ratchetKey(message, bob))
            _ = try open(message, by: &b, as: bob).get()
            let receipt = try XCTUnwrap(b.seal(kind: .receiptDelivered, messageID: .random(), body: [0, 0], conversation: bob))
            bobKeys.insert(try ratchetKey(receipt, alice))
            _ = try open(receipt, by: &a, as: alice).get()
        }
        XCTAssertEqual(aliceKeys.count, 1, "Alice's messages in one chain")
        XCTAssertEqual(bobKeys.count, 1, "Bob's receipts in his first chain")
        let reply = try seal(&b, 99, as: bob)
        XCTAssertFalse(bobKeys.contains(try ratchetKey(reply, alice)), "Bob's reply takes his step")
        _ = try open(reply, by: &a, as: alice).get()
        let answer = try seal(&a, 100, as: alice)
        XCTAssertFalse(aliceKeys.contains(try ratchetKey(answer, bob)), "and Alice's answer hers")
        XCTAssertEqual(try open(answer, by: &b, as: bob).get(), text(100))
    }

    /// Either side may write first: the responder before it heard anything (its first chain
    /// from the handshake), the initiator at once; and both at the same time.
    func testEitherSideWritesFirstAndBothAtOnce() throws {
        var (a, b) = try sides()
        let fromBob = try (0..<3).map { try seal(&b, $0, as: bob) }
        let fromAlice = try (0..<3).map { try seal(&a, $0 + 10, as: alice) }
        // Crossed on the way: each reads the other's, in any order.
        for (n, frame) in fromAlice.enumerated().reversed() { XCTAssertEqual(try open(frame, by: &b, as: bob).get(), text(n + 10)) }
        for (n, frame) in fromBob.enumerated() { XCTAssertEqual(try open(frame, by: &a, as: alice).get(), text(n)) }
        // And carry on.
        let next = try seal(&b, 99, as: bob)
        XCTAssertEqual(try open(next, by: &a, as: alice).get(), text(99))
        let back = try seal(&a, 98, as: alice)
        XCTAssertEqual(try open(back, by: &b, as: bob).get(), text(98))
    }

    /// Out of order, across DH steps: every frame opens once, in whatever order it came;
    /// each again is a replay and changes nothing.
    func testOutOfOrderAcrossStepsOpensEachOnceAndReplaysNever() throws {
        var (a, b) = try sides()
        var frames: [(frame: [UInt8], n: Int)] = []
        for run in 0..<5 {
            for i in 0..<4 { frames.append((try seal(&a, run * 10 + i, as: alice), run * 10 + i)) }
            // Bob answers each run (he has read its first), so Alice steps.
            XCTAssertEqual(try open(frames[run * 4].frame, by: &b, as: bob).get(), text(run * 10))
            let reply = try seal(&b, 500 + run, as: bob)
            XCTAssertEqual(try open(reply, by: &a, as: alice).get(), text(500 + run))
        }
        var generator = SeededGenerator(seed: 7)
        let rest = frames.enumerated().filter { $0.offset % 4 != 0 }.map(\.element).shuffled(using: &generator)
        for (frame, n) in rest {
            XCTAssertEqual(try open(frame, by: &b, as: bob).get(), text(n), "frame \(n)")
        }
        XCTAssertEqual(b.current?.skippedKeys, 0, "every skipped key was used, and is gone")
        for (frame, n) in frames {
            XCTAssertEqual(open(frame, by: &b, as: bob), .failure(.replayed), "frame \(n) again")
        }
        // Nothing moved: the conversation goes on.
        let later = try seal(&a, 1000, as: alice)
        XCTAssertEqual(try open(later, by: &b, as: bob).get(), text(1000))
    }

    /// Past `Ratchet.maxSkipped`, the oldest skipped keys go: their frames read as lost
    /// (`.wrongSession`, the could-not-read way), the rest open; a header claiming a gap past
    /// `maxGap` derives nothing and moves nothing.
    func testSkippedKeysAreBoundedAndAFarGapOpensNothing() throws {
        var (a, b) = try sides()
        let count = Ratchet.maxSkipped + 5
        let frames = try (0..<count).map { try seal(&a, $0, as: alice) }
        let last = try seal(&a, count, as: alice)
        XCTAssertEqual(try open(last, by: &b, as: bob).get(), text(count))
        XCTAssertEqual(b.current?.skippedKeys, Ratchet.maxSkipped)
        for n in 0..<5 { XCTAssertEqual(open(frames[n], by: &b, as: bob), .failure(.wrongSession), "frame \(n): its key was dropped") }
        for n in [5, 500, count - 1] { XCTAssertEqual(try open(frames[n], by: &b, as: bob).get(), text(n)) }

        // A header sealed with the conversation's key (only a holder of the account keys can)
        // that claims a number far ahead.
        let (_, bobSession) = try pair.handshake()
        var fresh = bobSession.started
        let real = try XCTUnwrap(Envelope.openHeader(last, conversation: bob).ratchet)
        let far = EnvelopeHeader(kind: .message, messageID: .random(), sequence: 0, sessionID: bobSession.id,
                                 ratchet: RatchetHeader(publicKey: real.publicKey, previousCount: 0, number: Ratchet.maxGap + 1))
        XCTAssertThrowsError(try fresh.open(last, header: far, at: t0)) { XCTAssertEqual($0 as? EnvelopeError, .bodyUnreadable) }
        XCTAssertEqual(fresh.current?.skippedKeys, 0, "nothing derived, nothing kept")
        // A ratchet key no DH accepts (all zeros, a low-order point).
        let lowOrder = EnvelopeHeader(kind: .message, messageID: .random(), sequence: 0, sessionID: bobSession.id,
                                      ratchet: RatchetHeader(publicKey: [UInt8](repeating: 0, count: 32), previousCount: 0, number: 0))
        XCTAssertThrowsError(try fresh.open(last, header: lowOrder, at: t0)) { XCTAssertEqual($0 as? EnvelopeError, .bodyUnreadable) }
    }

    func testSkippedKeysOlderThanTheRelaysHoldArePruned() throws {
        var (a, b) = try sides()
        let first = try seal(&a, 0, as: alice)
        let second = try seal(&a, 1, as: alice)
        XCTAssertEqual(try open(second, by: &b, as: bob, at: t0).get(), text(1))
        var kept = b, pruned = b
        kept.prune(now: t0 + Ratchet.skippedLifetime)
        pruned.prune(now: t0 + Ratchet.skippedLifetime + 1)
        XCTAssertEqual(try open(first, by: &kept, as: bob).get(), text(0))
        XCTAssertEqual(pruned.current?.skippedKeys, 0)
        XCTAssertEqual(open(first, by: &pruned, as: bob), .failure(.replayed), "its key is gone")
    }

    // MARK: what a copy of the whole state opens

    /// Every key a copy of `state` holds, and the next `ahead` message keys of each chain
    /// key it holds: what someone who took the state could try.
    private func candidateKeys(_ state: SavedSessionState, ahead: Int = 64) -> [SecretBytes] {
        var keys: [SecretBytes] = []
        for secret in state.heldSecrets {
            keys.append(secret)
            var chain = secret
            for _ in 0..<ahead {
                let (message, next) = Ratchet.chainStep(chain)
                keys.append(message)
                chain = next
            }
        }
        return keys
    }

    /// Whether any of `keys` opens the body of `frame`.
    private func opensWithAny(_ frame: [UInt8], _ keys: [SecretBytes], _ conversation: ConversationSecret) throws -> Bool {
        let header = try Envelope.openHeader(frame, conversation: conversation)
        return keys.contains { key in
            [Handshake.Role.initiator, .responder].contains { role in
                (try? Envelope.openBody(frame[...], header: header, key: key, senderRole: role)) != nil
            }
        }
    }

    /// (a) Forward secrecy: a copy of Alice's whole state (serialized, as the store holds it
    /// sealed under her device key) taken after message k opens none of messages 1 … k−1,
    /// either way, as the relay held them — with its own keys, or any chain step of them.
    func testACopyOfTheStateOpensNothingSentBefore() throws {
        var (a, b) = try sides()
        var before: [(frame: [UInt8], readBy: ConversationSecret)] = []
        for n in 0..<12 {
            if n % 3 == 2 {
                let frame = try seal(&b, n, as: bob)
                _ = try open(frame, by: &a, as: alice).get()
                before.append((frame, alice))
            } else {
                let frame = try seal(&a, n, as: alice)
                _ = try open(frame, by: &b, as: bob).get()
                before.append((frame, bob))
            }
        }
        // One of Bob's frames is still on its way: its key is in Alice's copy, as it must be.
        let inFlight = try seal(&b, 100, as: bob)
        let lateOne = try seal(&b, 101, as: bob)
        _ = try open(lateOne, by: &a, as: alice).get()

        var copy = try SavedSessionState(serialized: a.serialized())
        let keys = candidateKeys(copy)
        for (n, item) in before.enumerated() {
            XCTAssertFalse(try opensWithAny(item.frame, keys, item.readBy), "message \(n) opened with a key from the copy")
            var again = copy
            XCTAssertNotEqual(try? open(item.frame, by: &again, as: item.readBy).get(), text(n))
        }
        XCTAssertEqual(try open(inFlight, by: &copy, as: alice).get(), text(100), "what has not arrived yet still opens")
    }

    /// (b) Post-compromise security: a copy of Alice's whole state, after Bob's next reply
    /// and Alice's answer, opens none of the later messages: her answer brings a ratchet key
    /// made after the copy was taken. (If Bob wrote last before the copy, Alice's next
    /// message already takes the step she owes, with a key the copy never had.)
    func testAfterAReplyAndAnAnswerTheCopyOpensNothingLater() throws {
        for aliceWroteLast in [true, false] {
            var (a, b) = try sides()
            for n in 0..<3 {
                _ = try open(try seal(&a, n, as: alice), by: &b, as: bob).get()
                _ = try open(try seal(&b, n, as: bob), by: &a, as: alice).get()
            }
            if aliceWroteLast { _ = try open(try seal(&a, 3, as: alice), by: &b, as: bob).get() }
            var stolen = try SavedSessionState(serialized: a.serialized())
            var later: [(frame: [UInt8], readBy: ConversationSecret, n: Int)] = []
            if aliceWroteLast {
                // Bob's reply: the copy follows it (it holds Alice's ratchet key of the moment).
                let reply = try seal(&b, 50, as: bob)
                _ = try open(reply, by: &a, as: alice).get()
                XCTAssertEqual(try open(reply, by: &stolen, as: alice).get(), text(50))
            } else {
                // Alice's next message takes the step she owes: past the copy already.
                let more = try seal(&a, 40, as: alice)
                _ = try open(more, by: &b, as: bob).get()
                later.append((more, bob, 40))
                let reply = try seal(&b, 50, as: bob)
                _ = try open(reply, by: &a, as: alice).get()
                later.append((reply, alice, 50))
            }
            // Alice's answer, and everything after, either way.
            let answer = try seal(&a, 60, as: alice)
            _ = try open(answer, by: &b, as: bob).get()
            later.append((answer, bob, 60))
            for n in 61..<70 {
                if n % 2 == 0 {
                    let frame = try seal(&a, n, as: alice)
                    _ = try open(frame, by: &b, as: bob).get()
                    later.append((frame, bob, n))
                } else {
                    let frame = try seal(&b, n, as: bob)
                    _ = try open(frame, by: &a, as: alice).get()
                    later.append((frame, alice, n))
                }
            }
            let keys = candidateKeys(stolen, ahead: 200)
            for item in later {
                XCTAssertFalse(try opensWithAny(item.frame, keys, item.readBy), "message \(item.n) opened with the stolen state")
                var tryIt = stolen
                XCTAssertNotEqual(try? open(item.frame, by: &tryIt, as: item.readBy).get(), text(item.n), "message \(item.n)")
            }
        }
    }

    /// (c) A duplicate never advances the chain wrongly: opened once, refused after, and a
    /// frame that fails (altered) leaves the state exactly as it was.
    func testDuplicatesAndAlteredFramesLeaveTheStateAsItWas() throws {
        var (a, b) = try sides()
        let one = try seal(&a, 1, as: alice), two = try seal(&a, 2, as: alice)
        XCTAssertEqual(try open(one, by: &b, as: bob).get(), text(1))
        let before = b.serialized()
        XCTAssertEqual(open(one, by: &b, as: bob), .failure(.replayed))
        var altered = two
        altered[altered.count - 1] ^= 1
        XCTAssertEqual(open(altered, by: &b, as: bob), .failure(.bodyUnreadable))
        XCTAssertEqual(b.serialized(), before, "neither moved the ratchet")
        XCTAssertEqual(try open(two, by: &b, as: bob).get(), text(2))
    }

    /// The keys ahead (what relay reader threads open with) are the keys the ratchet takes
    /// for those frames, carried over as the chain moves, and made again after a DH step.
    func testKeysAheadAreTheKeysTheRatchetTakes() throws {
        var (a, b) = try sides()
        let first = try seal(&a, 0, as: alice)
        _ = try open(first, by: &b, as: bob).get()
        let frames = try (1...6).map { try seal(&a, $0, as: alice) }
        let id = try Envelope.openHeader(first, conversation: bob).sessionID
        let ahead = try XCTUnwrap(b.lookahead(session: id, upTo: 4, continuing: nil))
        XCTAssertEqual(ahead.senderRole, .initiator)
        XCTAssertEqual(ahead.keys.first, 1)
        XCTAssertEqual(ahead.keys.keys.count, 4)
        XCTAssertEqual(b.lookahead(session: id, upTo: 1000, continuing: nil)?.keys.keys.count, Ratchet.fewestAhead,
                       "a chain that took one frame gets the fewest")
        for (n, frame) in frames.prefix(4).enumerated() {
            let header = try Envelope.openHeader(frame, conversation: bob)
            XCTAssertEqual(try Envelope.openBody(frame[...], header: header, key: ahead.keys.keys[n], senderRole: ahead.senderRole), text(n + 1))
        }
        // Two taken: the cache carries on from there, with the same keys and two more.
        for frame in frames.prefix(2) {
            let key = try b.takeKey(try Envelope.openHeader(frame, conversation: bob), at: t0)
            XCTAssertTrue(ahead.keys.keys.contains { $0.sameBytes(as: key) })
        }
        let next = try XCTUnwrap(b.lookahead(session: id, upTo: 4, continuing: ahead.keys))
        XCTAssertEqual(next.keys.first, 3)
        XCTAssertTrue(next.keys.keys[0] === ahead.keys.keys[2], "carried over, not made again")
        let last = try Envelope.openHeader(frames[5], conversation: bob)
        XCTAssertEqual(try Envelope.openBody(frames[5][...], header: last, key: next.keys.keys[3], senderRole: .initiator), text(6))
        // After Bob's reply and Alice's answer, Alice's frames are under a new chain: new keys.
        _ = try open(try seal(&b, 50, as: bob), by: &a, as: alice).get()
        let answer = try seal(&a, 60, as: alice)
        let stale = try XCTUnwrap(b.lookahead(session: id, upTo: 4, continuing: next.keys))
        let answerHeader = try Envelope.openHeader(answer, conversation: bob)
        XCTAssertNotEqual(answerHeader.ratchet?.publicKey, stale.keys.publicKey, "Bob has not seen Alice's new key yet")
        _ = try open(answer, by: &b, as: bob).get()
        let fresh = try XCTUnwrap(b.lookahead(session: id, upTo: 4, continuing: stale.keys))
        XCTAssertEqual(fresh.keys.publicKey, answerHeader.ratchet?.publicKey)
        XCTAssertEqual(fresh.keys.first, 1)
    }

    /// The state written and read back mid-conversation (as the engine commits it with
    /// each batch) goes on as if never written.
    func testTheStateGoesOnAfterBeingWrittenAndReadBack() throws {
        var (a, b) = try sides()
        for n in 0..<30 {
            if n % 4 == 3 {
                _ = try open(try seal(&b, n, as: bob), by: &a, as: alice).get()
                b = try SavedSessionState(serialized: b.serialized())
            } else {
                let frame = try seal(&a, n, as: alice)
                a = try SavedSessionState(serialized: a.serialized())
                XCTAssertEqual(try open(frame, by: &b, as: bob).get(), text(n))
            }
        }
    }
}

/// A small deterministic generator for shuffles in tests.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

/// Issue 32, item 3: a used key is wiped from memory — no copy of a message key, or of the
/// chain key it came from, stays anywhere in this process's writable memory once the
/// ratchet moved past it (`SecretBytes` wipes on release; no key passes through an array).
final class RatchetErasureTests: XCTestCase {
    func testAUsedMessageKeyAndItsChainKeyAreGoneFromMemory() throws {
        let pair = ConvPair.make(5)
        let alice = pair.initiator.conversation(with: pair.responder), bob = pair.responder.conversation(with: pair.initiator)
        let (a, b) = try pair.handshake()
        var alices = a.started, bobs = b.started
        let before = try XCTUnwrap(alices.seal(kind: .message, messageID: .random(), body: [0], conversation: alice))
        let frame = try XCTUnwrap(alices.seal(kind: .message, messageID: .random(), body: [1, 2, 3], conversation: alice))
        _ = try bobs.open(before, header: try Envelope.openHeader(before, conversation: bob), at: 0)
        let header = try Envelope.openHeader(frame, conversation: bob)
        // What Bob will use, seen through a copy of his ratchet (then let go).
        let (messageKey, chainKey): (MaskedSecret, MaskedSecret) = try {
            var probe = try XCTUnwrap(bobs.currentRatchet)
            let key = try probe.receiveKey(XCTUnwrap(header.ratchet), at: 0)
            _ = probe
            return (MaskedSecret(key), MaskedSecret(try XCTUnwrap(bobs.currentRatchet?.chainKeys.receive ?? nil)))
        }()
        // Before: the chain key is held (the search finds what is there).
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(chainKey.places()), 1, "the search finds a key that is held")
        XCTAssertEqual(try bobs.open(frame, header: header, at: 0), [1, 2, 3])
        // And the conversation goes on both ways (DH steps replace the rest).
        for n in 0..<3 {
            let reply = try XCTUnwrap(bobs.seal(kind: .message, messageID: .random(), body: [UInt8(n)], conversation: bob))
            _ = try alices.open(reply, header: try Envelope.openHeader(reply, conversation: alice), at: 0)
            let next = try XCTUnwrap(alices.seal(kind: .message, messageID: .random(), body: [UInt8(n)], conversation: alice))
            _ = try bobs.open(next, header: try Envelope.openHeader(next, conversation: bob), at: 0)
        }
        XCTAssertEqual(messageKey.places(), 0, "a used message key stays nowhere in memory")
        XCTAssertEqual(chainKey.places(), 0, "nor the chain key it came from")
    }
}
