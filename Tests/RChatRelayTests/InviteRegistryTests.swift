import RChatNet
@testable import RChatRelay
import RChatWire
import XCTest

/// The registry's bounds and expiry on virtual time (`now` given): per mailbox, per host, in
/// all; refresh by registering again or by being connected at a sweep.
final class InviteRegistryTests: XCTestCase {
    private func mailbox(_ n: UInt8) -> MailboxID { MailboxID(publicKey: [UInt8](repeating: n, count: 32)) }
    private func token(_ m: MailboxID, _ n: UInt8) -> InviteToken { InviteToken.derived(mailbox: m, salt: [UInt8](repeating: n, count: 16)) }
    private let hostA = HostAddress(high: 0, low: 0x7f00_0002), hostB = HostAddress(high: 0, low: 0x7f00_0003)

    private func limits(total: Int = 1000, perHost: Int = 1000, perMailbox: Int = 16) -> RelayConfiguration {
        var c = RelayConfiguration(keyFile: "")
        c.maxInvites = total
        c.maxInvitesPerHost = perHost
        c.maxInvitesPerMailbox = perMailbox
        return c
    }

    func testTheNewestFewPerMailboxAndRegisteringAgainRefreshes() {
        var r = InviteRegistry()
        let m = mailbox(1), l = limits(perMailbox: 2)
        XCTAssertEqual(r.register(token(m, 1), for: m, from: hostA, now: 10, limits: l), .registered(dropped: nil))
        XCTAssertEqual(r.register(token(m, 2), for: m, from: hostA, now: 11, limits: l), .registered(dropped: nil))
        XCTAssertEqual(r.register(token(m, 3), for: m, from: hostA, now: 12, limits: l), .registered(dropped: token(m, 1)))
        XCTAssertNil(r.owner(of: token(m, 1)))
        XCTAssertEqual(r.countByHost[hostA], 2, "the dropped one no longer counts for its host")
        XCTAssertEqual(r.register(token(m, 2), for: m, from: hostB, now: 20, limits: l), .refreshed)
        XCTAssertEqual(r.entries[token(m, 2)]?.refreshed, 20)
        XCTAssertEqual(r.register(token(m, 2), for: mailbox(2), from: hostA, now: 20, limits: l), .takenByAnother)
    }

    func testAHostIsBoundedToAQuarterOfTheTotalAndItsOption() {
        var r = InviteRegistry()
        let l = limits(total: 40)
        XCTAssertEqual(l.invitesPerHost, 10)
        for n in 0..<10 { XCTAssertEqual(r.register(token(mailbox(UInt8(n)), 0), for: mailbox(UInt8(n)), from: hostA, now: 0, limits: l), .registered(dropped: nil)) }
        XCTAssertEqual(r.register(token(mailbox(50), 0), for: mailbox(50), from: hostA, now: 0, limits: l), .hostFull)
        XCTAssertEqual(r.register(token(mailbox(51), 0), for: mailbox(51), from: hostB, now: 0, limits: l), .registered(dropped: nil))
        XCTAssertEqual(limits(total: 40, perHost: 3).invitesPerHost, 3)
        XCTAssertEqual(limits(total: 2).invitesPerHost, 1)
        // A mailbox at its bound from a full host replaces its oldest: that frees the host's one.
        var s = InviteRegistry()
        let m = mailbox(9), tight = limits(perHost: 2, perMailbox: 2)
        _ = s.register(token(m, 1), for: m, from: hostA, now: 0, limits: tight)
        _ = s.register(token(m, 2), for: m, from: hostA, now: 0, limits: tight)
        XCTAssertEqual(s.register(token(m, 3), for: m, from: hostA, now: 0, limits: tight), .registered(dropped: token(m, 1)))
        XCTAssertEqual(s.register(token(mailbox(8), 1), for: mailbox(8), from: hostA, now: 0, limits: tight), .hostFull)
    }

    func testTheTotalIsBoundedAndLoadedOnesCountForNoHost() {
        var r = InviteRegistry()
        let l = limits(total: 4, perHost: 4)
        for n in 0..<4 { _ = r.register(token(mailbox(UInt8(n)), 0), for: mailbox(UInt8(n)), from: nil, now: 0, limits: l) }
        XCTAssertTrue(r.countByHost.isEmpty)
        XCTAssertEqual(r.register(token(mailbox(7), 0), for: mailbox(7), from: hostB, now: 0, limits: l), .full)
        // At its own bound, a mailbox replaces its oldest even in a full registry.
        XCTAssertEqual(r.register(token(mailbox(0), 1), for: mailbox(0), from: nil, now: 0, limits: limits(total: 4, perMailbox: 1)),
                       .registered(dropped: token(mailbox(0), 0)))
    }

    func testASweepForgetsTheStaleAndRefreshesTheConnected() {
        var r = InviteRegistry()
        let l = limits(), gone = mailbox(1), here = mailbox(2), fresh = mailbox(3)
        _ = r.register(token(gone, 1), for: gone, from: hostA, now: 0, limits: l)
        _ = r.register(token(here, 1), for: here, from: hostA, now: 0, limits: l)
        _ = r.register(token(fresh, 1), for: fresh, from: hostA, now: 90, limits: l)
        XCTAssertEqual(r.sweep(now: 40, expirySeconds: 100) { $0 == here }, .init(), "nothing before half the expiry")
        XCTAssertEqual(r.sweep(now: 60, expirySeconds: 100) { $0 == here }, .init(expired: [], refreshed: [token(here, 1)]))
        XCTAssertEqual(r.sweep(now: 99, expirySeconds: 100) { _ in false }, .init(), "not yet expired")
        XCTAssertEqual(r.sweep(now: 100, expirySeconds: 100) { _ in false }, .init(expired: [token(gone, 1)], refreshed: []))
        XCTAssertNil(r.owner(of: token(gone, 1)))
        XCTAssertEqual(r.countByHost[hostA], 2)
        XCTAssertEqual(r.sweep(now: 190, expirySeconds: 100) { _ in false }.expired.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) },
                       [token(here, 1), token(fresh, 1)].sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) })
        XCTAssertEqual(r.count, 0)
        XCTAssertTrue(r.countByHost.isEmpty)
        // A forgotten mailbox starts afresh: its bound is not held by what expired.
        for n in 0..<16 { XCTAssertEqual(r.register(token(gone, UInt8(n + 10)), for: gone, from: hostA, now: 200, limits: l), .registered(dropped: nil)) }
    }
}
