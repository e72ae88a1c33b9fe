import XCTest
@testable import RChatCore

/// `TimerPolicy`: the order both sides apply timer changes in (a logical counter, ties by id;
/// no wall clock), and the counter a new change here takes.
final class TimerPolicyTests: XCTestCase {
    typealias Change = TimerPolicy.Change

    /// Ids as a clock far ahead and one far behind would begin them, and two in between.
    let ids = [MessageID(high: 0, low: 0), MessageID(high: 1, low: 9), MessageID(high: 1, low: 10), MessageID(high: .max, low: .max)]
    let counters: [UInt64] = [0, 1, 2, 7, TimerPolicy.maximumCounter - 1, TimerPolicy.maximumCounter]

    var changes: [Change] { counters.flatMap { c in ids.map { Change(counter: c, id: $0) } } }

    func testAnythingReplacesNothing() {
        for change in changes { XCTAssertTrue(TimerPolicy.replaces(change, nil), "\(change)") }
    }

    func testTheGreaterCounterWinsWhateverTheIdsThenTheGreaterId() {
        for a in changes {
            for b in changes {
                let expected = a.counter != b.counter ? a.counter > b.counter
                    : b.id.bytes.lexicographicallyPrecedes(a.id.bytes)
                XCTAssertEqual(TimerPolicy.replaces(a, b), expected, "\(a) over \(b)")
            }
        }
        // The attack: a change whose id begins ten years ahead loses to any later counter.
        XCTAssertTrue(TimerPolicy.replaces(Change(counter: 2, id: ids[0]), Change(counter: 1, id: ids[3])))
        // An older rChat's changes (counter 0) keep the old rule between themselves.
        XCTAssertTrue(TimerPolicy.replaces(Change(counter: 0, id: ids[2]), Change(counter: 0, id: ids[1])))
        XCTAssertFalse(TimerPolicy.replaces(Change(counter: 0, id: ids[1]), Change(counter: 0, id: ids[2])))
    }

    func testTheOrderIsStrictAndTotalSoBothSidesEndOnTheSameChange() {
        for a in changes {
            XCTAssertFalse(TimerPolicy.replaces(a, a), "a change does not replace itself: \(a)")
            for b in changes where a != b {
                XCTAssertNotEqual(TimerPolicy.replaces(a, b), TimerPolicy.replaces(b, a), "exactly one of \(a), \(b) wins")
                for c in changes where TimerPolicy.replaces(a, b) && TimerPolicy.replaces(b, c) {
                    XCTAssertTrue(TimerPolicy.replaces(a, c), "transitive: \(a) > \(b) > \(c)")
                }
            }
        }
        // Applied in any order, every side ends on the greatest.
        let sample = [Change(counter: 3, id: ids[0]), Change(counter: 0, id: ids[3]), Change(counter: 3, id: ids[1]), Change(counter: 1, id: ids[2])]
        var ends = Set<String>()
        for order in permutations(sample) {
            var current: Change?
            for change in order where TimerPolicy.replaces(change, current) { current = change }
            ends.insert(current!.description)
        }
        XCTAssertEqual(ends, [Change(counter: 3, id: ids[1]).description])
    }

    func testANewChangeHereComesAfterEveryOneSeen() {
        XCTAssertEqual(TimerPolicy.next(after: nil), 1)
        for current in changes where current.counter < TimerPolicy.maximumCounter {
            let counter = TimerPolicy.next(after: current)
            XCTAssertEqual(counter, current.counter + 1)
            for id in ids {
                XCTAssertTrue(TimerPolicy.replaces(Change(counter: counter!, id: id), current),
                              "the user's change takes effect whatever its id: over \(current)")
            }
        }
        for id in ids {
            XCTAssertNil(TimerPolicy.next(after: Change(counter: TimerPolicy.maximumCounter, id: id)),
                         "no counter comes after the greatest: the change is refused, not reported")
        }
    }

    func testAContactsCounterFarPastEveryOneSeenIsNotBelieved() {
        for current in [nil] + changes.filter({ $0.counter < TimerPolicy.maximumCounter - TimerPolicy.maximumStep }) {
            let seen = current?.counter ?? 0
            for step in [0, 1, 2, TimerPolicy.maximumStep - 1, TimerPolicy.maximumStep] {
                XCTAssertTrue(TimerPolicy.isBelievable(seen + step, after: current), "\(seen) + \(step)")
            }
            XCTAssertFalse(TimerPolicy.isBelievable(seen + TimerPolicy.maximumStep + 1, after: current), "\(seen) + step + 1")
            XCTAssertFalse(TimerPolicy.isBelievable(TimerPolicy.maximumCounter, after: current), "the last counter, from \(seen)")
            // What is believed never spends the counters: a change here still comes after it.
            let believed = Change(counter: seen + TimerPolicy.maximumStep, id: ids[3])
            XCTAssertNotNil(TimerPolicy.next(after: believed))
        }
    }

    func testExpiry() {
        XCTAssertNil(TimerPolicy.expiry(start: 100, after: .off))
        XCTAssertEqual(TimerPolicy.expiry(start: 100, after: .oneHour), 3_700)
    }

    private func permutations(_ items: [Change]) -> [[Change]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { i -> [[Change]] in
            var rest = items
            let first = rest.remove(at: i)
            return permutations(rest).map { [first] + $0 }
        }
    }
}
