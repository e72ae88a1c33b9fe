import RChatCore
import XCTest

/// `DeliverySummary` over every pair and triple of statuses: what a message shows is never
/// more than every member proved, a failure is never hidden, and a single delivery (a
/// direct conversation) shows its own status.
final class DeliverySummaryTests: XCTestCase {
    typealias S = MessageStatus

    /// The lowest of each unordered pair, written out by hand (not computed from `rank`).
    static let lowestOfPair: [(S, S, S)] = [
        (.sending, .sent, .sending), (.sending, .delivered, .sending), (.sending, .read, .sending),
        (.sending, .notDelivered, .notDelivered), (.sending, .notConfirmed, .notConfirmed), (.sending, .failedToSend, .failedToSend),
        (.sent, .delivered, .sent), (.sent, .read, .sent), (.sent, .notDelivered, .notDelivered),
        (.sent, .notConfirmed, .notConfirmed), (.sent, .failedToSend, .failedToSend),
        (.delivered, .read, .delivered), (.delivered, .notDelivered, .notDelivered), (.delivered, .notConfirmed, .notConfirmed),
        (.delivered, .failedToSend, .failedToSend),
        (.read, .notDelivered, .notDelivered), (.read, .notConfirmed, .notConfirmed), (.read, .failedToSend, .failedToSend),
        (.notDelivered, .notConfirmed, .notDelivered), (.notDelivered, .failedToSend, .failedToSend),
        (.notConfirmed, .failedToSend, .failedToSend),
    ]

    func lowest(_ a: S, _ b: S) -> S {
        if a == b { return a }
        return Self.lowestOfPair.first { ($0.0 == a && $0.1 == b) || ($0.0 == b && $0.1 == a) }!.2
    }

    func testTheTableNamesEveryPairOnce() {
        var pairs = Set<[String]>()
        for (a, b, low) in Self.lowestOfPair {
            XCTAssertNotEqual(a, b)
            XCTAssertTrue(low == a || low == b)
            XCTAssertTrue(pairs.insert([a.rawValue, b.rawValue].sorted()).inserted, "\(a), \(b) twice")
        }
        XCTAssertEqual(pairs.count, S.allCases.count * (S.allCases.count - 1) / 2)
    }

    func testNoDeliveryShowsNothing() {
        let none = DeliverySummary([])
        XCTAssertNil(none.shown)
        XCTAssertEqual(none.total, 0)
        XCTAssertEqual(none.counts, [:])
    }

    func testOneDeliveryShowsItsOwnStatusAsADirectConversationAlwaysHas() {
        for s in S.allCases {
            let one = DeliverySummary([s])
            XCTAssertEqual(one.shown, s)
            XCTAssertEqual(one.counts, [s: 1])
            XCTAssertEqual(one.total, 1)
        }
    }

    func testEveryPairShowsItsLowestInEitherOrder() {
        for a in S.allCases {
            for b in S.allCases {
                let summary = DeliverySummary([a, b])
                XCTAssertEqual(summary.shown, lowest(a, b), "\(a), \(b)")
                XCTAssertEqual(DeliverySummary([b, a]), summary, "\(a), \(b): the order of deliveries does not matter")
                XCTAssertEqual(summary.total, 2)
                XCTAssertEqual(summary.count(a) + (a == b ? 0 : summary.count(b)), 2)
                XCTAssertEqual(summary.count(a), a == b ? 2 : 1)
            }
        }
    }

    func testEveryTripleShowsItsLowestInEveryOrderWithItsCounts() {
        for a in S.allCases {
            for b in S.allCases {
                for c in S.allCases {
                    let want = lowest(lowest(a, b), c)
                    for order in [[a, b, c], [a, c, b], [b, a, c], [b, c, a], [c, a, b], [c, b, a]] {
                        let summary = DeliverySummary(order)
                        XCTAssertEqual(summary.shown, want, "\(order)")
                        for s in S.allCases {
                            XCTAssertEqual(summary.count(s), order.filter { $0 == s }.count, "\(order): \(s)")
                        }
                        XCTAssertEqual(summary.total, 3)
                    }
                }
            }
        }
    }

    /// What the message shows follows from what every member proved: never rounded up.
    func testNothingIsShownThatEveryMemberDidNotProve() {
        for a in S.allCases {
            for b in S.allCases {
                for c in S.allCases {
                    let all = [a, b, c]
                    let shown = DeliverySummary(all).shown!
                    XCTAssertTrue(all.contains(shown), "\(all): shows one of its own")
                    if shown == .read { XCTAssertTrue(all.allSatisfy { $0 == .read }, "\(all): Read only when every member read it") }
                    if shown == .delivered {
                        XCTAssertTrue(all.allSatisfy(\.isFinal), "\(all): Delivered only when every member stored it")
                    }
                    if shown == .sent {
                        XCTAssertTrue(all.allSatisfy { $0 == .sent || $0.isFinal }, "\(all): Sent only when the relay took every copy")
                    }
                    let failures: [S] = [.failedToSend, .notDelivered, .notConfirmed]
                    if all.contains(where: failures.contains) {
                        XCTAssertTrue(failures.contains(shown), "\(all): a delivery in trouble is never hidden by the others")
                        XCTAssertTrue(shown.offersResend, "\(all): and the message offers Resend")
                    }
                    if all.contains(.failedToSend) { XCTAssertEqual(shown, .failedToSend, "\(all)") }
                }
            }
        }
    }

    func testRankIsATotalOrderOverEveryStatus() {
        XCTAssertEqual(Set(S.allCases.map(DeliverySummary.rank)).count, S.allCases.count)
        XCTAssertEqual(S.allCases.sorted { DeliverySummary.rank($0) < DeliverySummary.rank($1) },
                       [.failedToSend, .notDelivered, .notConfirmed, .sending, .sent, .delivered, .read])
    }
}
