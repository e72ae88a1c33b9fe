import XCTest
@testable import RChatCore

/// The rules of reactions and edits (issue 31): one reaction per person, the latest in the
/// logical order, the same summary for any order of the same items; Signal's edit limits.
final class ActionPolicyTests: XCTestCase {
    private func order(_ counter: UInt64, _ low: UInt64) -> TimerPolicy.Change {
        TimerPolicy.Change(counter: counter, id: MessageID(high: 0, low: low))
    }

    /// Every order of `items` (Heap's algorithm).
    static func permutations<T>(_ items: [T]) -> [[T]] {
        var a = items, out: [[T]] = []
        func generate(_ k: Int) {
            if k <= 1 { out.append(a); return }
            for i in 0..<k {
                generate(k - 1)
                a.swapAt(k % 2 == 0 ? i : 0, k - 1)
            }
        }
        generate(a.count)
        return out
    }

    func testAnEmojiIsOneGraphemeThatIsAnEmoji() {
        for yes in ["👍", "❤️", "❤", "👍🏽", "🇫🇷", "👨‍👩‍👧‍👦", "1️⃣", "😂", "©"] {
            XCTAssertTrue(ReactionPolicy.isEmoji(yes), yes)
        }
        for no in ["", "a", "1", "#", "ab", "👍👍", "👍 ", " 👍", "é", "\u{1B}", "👍\u{200F}", "\n",
                   String(repeating: "👍", count: 40)] {
            XCTAssertFalse(ReactionPolicy.isEmoji(no), no.debugDescription)
        }
        // One grapheme, but longer than any emoji sequence: refused.
        let long = "👍" + String(repeating: "\u{1F3FD}", count: 20)
        XCTAssertEqual(long.count, 1)
        XCTAssertFalse(ReactionPolicy.isEmoji(long))
    }

    func testEachPersonHasTheirLatestReactionWhateverTheOrderTheyCameIn() {
        let items: [(person: String, item: ReactionPolicy.Item)] = [
            ("alice", .init(emoji: "👍", order: order(1, 1))),
            ("alice", .init(emoji: "❤️", order: order(2, 2))),   // replaces her 👍
            ("bob", .init(emoji: "👍", order: order(1, 3))),
            ("carol", .init(emoji: "😂", order: order(1, 4))),
            ("carol", .init(emoji: nil, order: order(2, 5))),     // taken back
            ("dan", .init(emoji: "👍", order: order(3, 6))),
            ("dan", .init(emoji: "❤️", order: order(3, 7))),     // same counter: the greater id wins
        ]
        let expected = ["alice": "❤️", "bob": "👍", "dan": "❤️"]
        for arrangement in Self.permutations(items) {
            let current = ReactionPolicy.current(arrangement)
            XCTAssertEqual(current.mapValues { $0.emoji! }, expected)
            let summary = ReactionPolicy.summary(current)
            XCTAssertEqual(summary.map(\.emoji), ["❤️", "👍"])
            XCTAssertEqual(summary.map(\.count), [2, 1])
            XCTAssertEqual(ReactionPolicy.words(summary), "❤️ 2  👍 1")
        }
        XCTAssertTrue(ReactionPolicy.current([(person: "x", item: .init(emoji: nil, order: order(1, 1)))]).isEmpty)
        XCTAssertEqual(ReactionPolicy.words([]), "")
    }

    /// Emoji with as many reactions: the one whose first reaction came first in the order leads.
    func testTiesGoToTheEmojiReactedWithFirst() {
        let current: [String: ReactionPolicy.Item] = ["a": .init(emoji: "😂", order: order(5, 1)),
                                                      "b": .init(emoji: "👍", order: order(2, 2)),
                                                      "c": .init(emoji: "😮", order: order(2, 1))]
        XCTAssertEqual(ReactionPolicy.summary(current).map(\.emoji), ["😮", "👍", "😂"])
        XCTAssertEqual(ReactionPolicy.next(after: order(7, 1)), 8)
        XCTAssertEqual(ReactionPolicy.next(after: nil), 1)
        XCTAssertNil(ReactionPolicy.next(after: order(TimerPolicy.maximumCounter, 1)))
    }

    func testEditsKeepSignalsLimits() {
        let t: Int64 = 1_000_000
        XCTAssertNil(EditPolicy.refusal(outgoing: true, isText: true, writtenAt: t, edits: 0, now: t + 24 * 3600))
        XCTAssertEqual(EditPolicy.refusal(outgoing: true, isText: true, writtenAt: t, edits: 0, now: t + 24 * 3600 + 1), .tooLate)
        XCTAssertEqual(EditPolicy.refusal(outgoing: false, isText: true, writtenAt: t, edits: 0, now: t), .notYours)
        XCTAssertEqual(EditPolicy.refusal(outgoing: true, isText: false, writtenAt: t, edits: 0, now: t), .notText)
        XCTAssertNil(EditPolicy.refusal(outgoing: true, isText: true, writtenAt: t, edits: 9, now: t))
        XCTAssertEqual(EditPolicy.refusal(outgoing: true, isText: true, writtenAt: t, edits: 10, now: t), .tooManyEdits)
        XCTAssertEqual("\(EditPolicy.Refusal.tooLate)", "a message can be edited for 24 hours after it was sent")

        XCTAssertTrue(EditPolicy.accepts(fromAuthor: true, isText: true, originalHeldAt: t, editHeldAt: t + 48 * 3600, editsTaken: 9))
        XCTAssertFalse(EditPolicy.accepts(fromAuthor: true, isText: true, originalHeldAt: t, editHeldAt: t + 48 * 3600 + 1, editsTaken: 0))
        XCTAssertFalse(EditPolicy.accepts(fromAuthor: false, isText: true, originalHeldAt: t, editHeldAt: t, editsTaken: 0))
        XCTAssertFalse(EditPolicy.accepts(fromAuthor: true, isText: false, originalHeldAt: t, editHeldAt: t, editsTaken: 0))
        XCTAssertFalse(EditPolicy.accepts(fromAuthor: true, isText: true, originalHeldAt: t, editHeldAt: t, editsTaken: 10))
    }

    func testTheSameEditsInAnyOrderEndOnTheSameText() {
        let edits = [(text: "b", order: order(2, 1)), (text: "c", order: order(3, 9)), (text: "d", order: order(3, 10)),
                     (text: "a", order: order(1, 1))]
        for arrangement in Self.permutations(edits) { XCTAssertEqual(EditPolicy.current(original: "o", edits: arrangement), "d") }
        XCTAssertEqual(EditPolicy.current(original: "o", edits: []), "o")
    }
}
