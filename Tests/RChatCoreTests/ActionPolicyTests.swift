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

        XCTAssertTrue(EditPolicy.accepts(fromAuthor: true, isText: true, originalHeldAt: t, editHeldAt: t + 48 * 3600))
        XCTAssertFalse(EditPolicy.accepts(fromAuthor: true, isText: true, originalHeldAt: t, editHeldAt: t + 48 * 3600 + 1))
        XCTAssertFalse(EditPolicy.accepts(fromAuthor: false, isText: true, originalHeldAt: t, editHeldAt: t))
        XCTAssertFalse(EditPolicy.accepts(fromAuthor: true, isText: false, originalHeldAt: t, editHeldAt: t))
        XCTAssertTrue(EditPolicy.isEditable(.text("a")))
        XCTAssertTrue(EditPolicy.isEditable(.reply(Reply(target: MessageID(high: 1, low: 2), text: "a"))))
        XCTAssertFalse(EditPolicy.isEditable(.unsent))
        XCTAssertEqual(EditPolicy.next(after: nil), 1)
        XCTAssertEqual(EditPolicy.next(after: order(4, 1)), 5)
        XCTAssertEqual("\(EditPolicy.Refusal.deleted)", "a message deleted for everyone cannot be edited")
    }

    /// A hostile author's edits past 10: every side counts the first 10 in the order, and
    /// deletes the rest, whatever order they came in — so every side shows the same text.
    func testOnlyTheFirstTenEditsInTheOrderCountOnEverySide() {
        let edits = (1...13).map { (text: "v\($0)", order: order(UInt64($0), 1)) }
        for arrangement in [edits, edits.reversed(), Array(edits[6...] + edits[..<6])] {
            XCTAssertEqual(EditPolicy.counted(arrangement, order: \.order).map(\.text), (1...10).map { "v\($0)" })
            XCTAssertEqual(EditPolicy.surplus(arrangement, order: \.order).map(\.text), ["v11", "v12", "v13"])
            XCTAssertEqual(EditPolicy.current(original: "o", edits: arrangement), "v10")
        }
        XCTAssertEqual(EditPolicy.surplus(Array(edits.prefix(10)), order: \.order).count, 0)
    }

    func testDeleteForEveryoneKeepsSignalsLimits() {
        let t: Int64 = 1_000_000
        let target = MessageID(high: 3, low: 4)
        for content in [MessageContent.text("a"), .reply(Reply(target: target, text: "b")),
                        .attachment(Attachment(kind: .file, name: "f.txt", size: 1, contentHash: Array(repeating: 1, count: 32),
                                               key: Array(repeating: 2, count: 32)))] {
            XCTAssertNil(UnsendPolicy.refusal(outgoing: true, content: content, writtenAt: t, now: t + 24 * 3600))
            XCTAssertEqual(UnsendPolicy.refusal(outgoing: true, content: content, writtenAt: t, now: t + 24 * 3600 + 1), .tooLate)
            XCTAssertEqual(UnsendPolicy.refusal(outgoing: false, content: content, writtenAt: t, now: t), .notYours)
            XCTAssertTrue(UnsendPolicy.accepts(fromAuthor: true, content: content, originalHeldAt: t, unsendHeldAt: t + 48 * 3600))
            XCTAssertFalse(UnsendPolicy.accepts(fromAuthor: true, content: content, originalHeldAt: t, unsendHeldAt: t + 48 * 3600 + 1))
            XCTAssertFalse(UnsendPolicy.accepts(fromAuthor: false, content: content, originalHeldAt: t, unsendHeldAt: t))
        }
        XCTAssertEqual(UnsendPolicy.refusal(outgoing: true, content: .unsent, writtenAt: t, now: t), .alreadyDeleted)
        let reaction = MessageContent.control(.reaction(target: target, emoji: "👍", counter: 1))
        XCTAssertEqual(UnsendPolicy.refusal(outgoing: true, content: reaction, writtenAt: t, now: t), .notAMessage)
        XCTAssertTrue(UnsendPolicy.accepts(fromAuthor: true, content: .unsent, originalHeldAt: t, unsendHeldAt: t + 99 * 3600),
                      "it came as the mark: nothing more to do")
        XCTAssertFalse(UnsendPolicy.accepts(fromAuthor: false, content: .unsent, originalHeldAt: t, unsendHeldAt: t))
        XCTAssertFalse(UnsendPolicy.accepts(fromAuthor: true, content: reaction, originalHeldAt: t, unsendHeldAt: t))
        XCTAssertEqual("\(UnsendPolicy.Refusal.tooLate)", "a message can be deleted for everyone for 24 hours after it was sent")
    }

    func testTheSameEditsInAnyOrderEndOnTheSameText() {
        let edits = [(text: "b", order: order(2, 1)), (text: "c", order: order(3, 9)), (text: "d", order: order(3, 10)),
                     (text: "a", order: order(1, 1))]
        for arrangement in Self.permutations(edits) { XCTAssertEqual(EditPolicy.current(original: "o", edits: arrangement), "d") }
        XCTAssertEqual(EditPolicy.current(original: "o", edits: []), "o")
    }
}
