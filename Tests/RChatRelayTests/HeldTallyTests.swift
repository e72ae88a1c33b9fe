import RChatCrypto
import RChatNet
@testable import RChatRelay
import RChatWire
import XCTest

/// The cluster's tallies as a pure value: every limit of a recipient, a host's and a
/// sender's bytes, release into the hour a frame was held, expiry of whole hours, the
/// zeroing at a complete handover, the request budget over time, and the bucket's text.
final class HeldTallyTests: XCTestCase {
    private let limits: HeldLimits = {
        var c = RelayConfiguration(keyFile: "")
        c.quotaBytes = 1000
        c.requestQuota = 2
        c.coverQuota = 2
        c.coverQuotaBytes = 300
        c.maxHeldBytes = 4000
        c.maxHeldBytesPerHost = 900
        c.holdHours = 2
        return HeldLimits(c)
    }()
    private let mailbox = MailboxID(publicKey: [UInt8](repeating: 1, count: 32))
    private var recipient: TallyKey { .recipient(mailbox) }
    private let t0: Int64 = 1_800_000_000 / 3600 * 3600

    func testTheChargeOfAFrameFollowsItsKindAndOrigin() {
        let token = InviteToken(bytes: [UInt8](repeating: 1, count: 16))!
        XCTAssertEqual(HeldCharge(.request, origin: .invite(token), bytes: 9), .request(bytes: 9))
        XCTAssertEqual(HeldCharge(.conversation, origin: .own, bytes: 9), .cover(bytes: 9))
        XCTAssertEqual(HeldCharge(.conversation, origin: .link(code: [UInt8](repeating: 2, count: 32)), bytes: 9), .conversation(bytes: 9))
        XCTAssertEqual(HeldCharge(.ahead, origin: .link(code: [UInt8](repeating: 2, count: 32)), bytes: 9), .conversation(bytes: 9))
    }

    func testTheKeysAreTheRecipientsThenTheSendersHostAndMailbox() {
        let host = HostAddress(high: 0x2001_0db8_0000_0001, low: 0)
        let keys = TallyKey.keys(recipient: mailbox, sender: HeldSender(host: host, mailbox: mailbox))
        XCTAssertEqual(keys, [.recipient(mailbox), .host(host), .sender(mailbox)])
        var a = [UInt8](repeating: 3, count: 32), b = [UInt8](repeating: 4, count: 32)
        let hiding = SecretBytes(consuming: &a), other = SecretBytes(consuming: &b)
        let names = keys.map { $0.name(hiding: hiding) }
        XCTAssertEqual(names[0], mailbox.hex, "a recipient as the stream's subjects name it")
        XCTAssertTrue(names[1].hasPrefix("h.") && names[2].hasPrefix("s."), "\(names)")
        XCTAssertEqual(names.map(\.count), [64, 34, 34])
        XCTAssertFalse(names[2].contains(mailbox.hex), "no sending mailbox in the clear")
        XCTAssertNotEqual(names[1], TallyKey.host(HostAddress(high: 0x2001_0db8_0000_0002, low: 0)).name(hiding: hiding))
        XCTAssertNotEqual(names[2], TallyKey.sender(mailbox).name(hiding: other), "keyed by the relay")
        XCTAssertNotEqual(names[2].dropFirst(2), TallyKey.host(HostAddress(high: 0, low: 0)).name(hiding: hiding).dropFirst(2))
        XCTAssertEqual(TallyKey.keys(recipient: mailbox, sender: HeldSender(host: nil, mailbox: nil)), [.recipient(mailbox)])
        XCTAssertEqual(limits.heldBytesPerHost, 900)
        XCTAssertEqual(limits.heldBytesPerSender, 500, "never more than an eighth of --max-held-bytes")
    }

    func testConversationBytesStopAtTheQuotaAndComeBackOnRelease() {
        var t = HeldTally()
        XCTAssertNil(t.admit(.conversation(bytes: 600), heldAt: t0, as: recipient, limits: limits))
        XCTAssertNil(t.admit(.conversation(bytes: 400), heldAt: t0 + 3599, as: recipient, limits: limits), "up to the quota exactly")
        XCTAssertEqual(t.admit(.conversation(bytes: 1), heldAt: t0 + 3600, as: recipient, limits: limits), .byteQuotaExceeded)
        XCTAssertEqual(t.total(now: t0 + 3600, holdSeconds: limits.holdSeconds).bytes, 1000, "a refusal changes nothing")
        t.release(.conversation(bytes: 400), heldAt: t0 + 10, as: recipient)
        XCTAssertNil(t.admit(.conversation(bytes: 400), heldAt: t0 + 3600, as: recipient, limits: limits))
        XCTAssertEqual(t.slots[t0 / 3600]?.bytes, 600)
        XCTAssertEqual(t.slots[t0 / 3600 + 1]?.bytes, 400)
        t.release(.conversation(bytes: 5000), heldAt: t0, as: recipient)
        XCTAssertNil(t.slots[t0 / 3600], "never below nothing; an empty hour goes")
        t.release(.conversation(bytes: 1), heldAt: t0 - 7200, as: recipient)
        XCTAssertEqual(t.total(now: t0 + 3600, holdSeconds: limits.holdSeconds).bytes, 400, "an hour with nothing: nothing to give back")
    }

    func testAWholeHourStopsCountingOnceEveryFrameOfItExpired() {
        var t = HeldTally()
        XCTAssertNil(t.admit(.conversation(bytes: 1000), heldAt: t0 + 100, as: recipient, limits: limits))
        // Held for 2 h: the last frame of that hour expires at t0 + 3600 + 7200.
        XCTAssertEqual(t.admit(.conversation(bytes: 1), heldAt: t0 + 3600 + 7199, as: recipient, limits: limits), .byteQuotaExceeded)
        XCTAssertNil(t.admit(.conversation(bytes: 1000), heldAt: t0 + 3600 + 7200, as: recipient, limits: limits))
        XCTAssertEqual(t.slots.keys.sorted(), [(t0 + 10_800) / 3600], "the expired hour was dropped")
    }

    func testCoverHasItsAllowanceAndCountsInTheBytes() {
        var t = HeldTally()
        XCTAssertNil(t.admit(.cover(bytes: 200), heldAt: t0, as: recipient, limits: limits))
        XCTAssertEqual(t.admit(.cover(bytes: 101), heldAt: t0, as: recipient, limits: limits), .quotaExceeded, "cover bytes")
        XCTAssertNil(t.admit(.cover(bytes: 100), heldAt: t0, as: recipient, limits: limits))
        XCTAssertEqual(t.admit(.cover(bytes: 0), heldAt: t0, as: recipient, limits: limits), .quotaExceeded, "cover frames")
        XCTAssertNil(t.admit(.conversation(bytes: 700), heldAt: t0, as: recipient, limits: limits))
        XCTAssertEqual(t.admit(.conversation(bytes: 1), heldAt: t0, as: recipient, limits: limits), .byteQuotaExceeded)
        t.release(.cover(bytes: 200), heldAt: t0, as: recipient)
        XCTAssertEqual(t.slots[t0 / 3600], HeldTally.Slot(bytes: 800, cover: 1, coverBytes: 100))
        XCTAssertNil(t.admit(.cover(bytes: 150), heldAt: t0, as: recipient, limits: limits))
    }

    func testRequestsAreBoundedHeldAndInABurstRefilledPerHourAndCountApart() {
        var t = HeldTally()
        XCTAssertNil(t.admit(.request(bytes: 900), heldAt: t0, as: recipient, limits: limits))
        XCTAssertNil(t.admit(.request(bytes: 900), heldAt: t0, as: recipient, limits: limits))
        XCTAssertEqual(t.admit(.request(bytes: 1), heldAt: t0, as: recipient, limits: limits), .requestQuotaExceeded, "two held")
        XCTAssertNil(t.admit(.conversation(bytes: 1000), heldAt: t0, as: recipient, limits: limits), "requests' bytes count apart")
        t.release(.request(bytes: 900), heldAt: t0, as: recipient)
        XCTAssertEqual(t.admit(.request(bytes: 1), heldAt: t0, as: recipient, limits: limits), .requestQuotaExceeded, "room, but the burst is spent")
        XCTAssertEqual(t.admit(.request(bytes: 1), heldAt: t0 + 1700, as: recipient, limits: limits), .requestQuotaExceeded, "0.94 refilled")
        XCTAssertNil(t.admit(.request(bytes: 1), heldAt: t0 + 1800, as: recipient, limits: limits), "two per hour: one after half an hour")
        t.handedOver()
        XCTAssertTrue(t.slots.isEmpty)
        XCTAssertEqual(t.admit(.request(bytes: 1), heldAt: t0 + 1800, as: recipient, limits: limits), .requestQuotaExceeded,
                       "a handover keeps what was sent lately")
        XCTAssertNil(t.admit(.request(bytes: 1), heldAt: t0 + 1_000_000, as: recipient, limits: limits))
        XCTAssertEqual(t.requestTokens, 1, "refilled to the quota at most")
    }

    func testAHostAndASenderCountBytesOfEveryKindAsAFullRelay() {
        let host = TallyKey.host(HostAddress(high: 0, low: 0x7f00_0002)), sender = TallyKey.sender(mailbox)
        var h = HeldTally(), s = HeldTally()
        XCTAssertNil(h.admit(.request(bytes: 500), heldAt: t0, as: host, limits: limits))
        XCTAssertNil(h.admit(.cover(bytes: 400), heldAt: t0, as: host, limits: limits))
        XCTAssertEqual(h.admit(.conversation(bytes: 1), heldAt: t0, as: host, limits: limits), .relayFull)
        h.release(.request(bytes: 500), heldAt: t0, as: host)
        XCTAssertEqual(h.slots[t0 / 3600], HeldTally.Slot(bytes: 400))
        XCTAssertNil(s.admit(.conversation(bytes: 500), heldAt: t0, as: sender, limits: limits))
        XCTAssertEqual(s.admit(.request(bytes: 1), heldAt: t0, as: sender, limits: limits), .relayFull)
        // A live frame already forwarded is counted whatever is held, and refuses the next.
        h.count(600, heldAt: t0 + 3600)
        XCTAssertEqual(h.total(now: t0 + 3600, holdSeconds: limits.holdSeconds).bytes, 1000)
        XCTAssertEqual(h.admit(.conversation(bytes: 1), heldAt: t0 + 3600, as: host, limits: limits), .relayFull)
        h.release(.conversation(bytes: 600), heldAt: t0 + 3600, as: host)
        XCTAssertNil(h.admit(.conversation(bytes: 500), heldAt: t0 + 3600, as: host, limits: limits))
    }

    func testTheBucketsTextRoundTripsAndNonsenseCountsAfresh() {
        let full = HeldTally(slots: [500_000: .init(bytes: 5, requests: 1, cover: 2, coverBytes: 3), 500_001: .init(bytes: 9)],
                             requestTokens: 0.25, tokensAt: 1_800_000_000)
        for t in [HeldTally(), full] { XCTAssertEqual(HeldTally(encoded: t.encoded), t) }
        XCTAssertEqual(full.encoded, "v1 0.25 1800000000 500000:5:1:2:3 500001:9:0:0:0")
        for bad in ["", "v1", "v2 - 0", "v1 x 0", "v1 - 0.5", "v1 - 0 1:2:3:4", "v1 - 0 1:-2:0:0:0", "v1 - 0 1:1:0:0:0 1:1:0:0:0"] {
            XCTAssertNil(HeldTally(encoded: bad), bad)
        }
    }
}
