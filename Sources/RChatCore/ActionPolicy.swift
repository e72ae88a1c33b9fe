/// What a message's actions do to it (issue 31, docs/DESIGN.md §17), as pure rules: the store
/// applies them as compare-and-set, each side the same rule to the same items, so every
/// member ends on the same reactions and the same text whatever order the items came in.
/// Each action is an item with its own id and delivery; none changes its target's status.
/// Items are ordered as timer changes are (`TimerPolicy.Change`: a logical counter, ties
/// broken by id), never by a sender's clock.
public enum ReactionPolicy {
    /// The longest emoji a reaction carries, in UTF-8 bytes: the longest emoji sequences
    /// (a family of four with skin tones) are 35.
    public static let maximumEmojiBytes = 64

    /// Whether `text` is one emoji: a single grapheme cluster whose first scalar is an emoji
    /// (Unicode's Emoji property: 👍, ❤️, 👍🏽, 🇫🇷, 👨‍👩‍👧) and, when that scalar is ASCII (a
    /// digit, `#`, `*`), a sequence from it (a keycap: 1️⃣). "a", "1", "ab", "👍👍" and "" are not.
    public static func isEmoji(_ text: String) -> Bool {
        guard text.count == 1, text.utf8.count <= maximumEmojiBytes, let first = text.unicodeScalars.first,
              first.properties.isEmoji else { return false }
        return !first.isASCII || text.unicodeScalars.count > 1
    }

    /// One person's reaction item: the emoji, or nil for one taken back (`--remove`), and
    /// its place in the order (`TimerPolicy.Change`).
    public struct Item: Equatable, Sendable {
        public let emoji: String?
        public let order: TimerPolicy.Change

        public init(emoji: String?, order: TimerPolicy.Change) {
            self.emoji = emoji
            self.order = order
        }
    }

    /// Each person's reaction in force: of their items, the latest in the order; none for
    /// one whose latest took it back. The same for any order of the same items.
    public static func current<Person: Hashable>(_ items: [(person: Person, item: Item)]) -> [Person: Item] {
        var latest: [Person: Item] = [:]
        for (person, item) in items where TimerPolicy.replaces(item.order, latest[person]?.order) {
            latest[person] = item
        }
        return latest.filter { $0.value.emoji != nil }
    }

    /// Under a message: each emoji with how many reacted so, most first; ties by whose
    /// reaction came first in the order (the same on every side).
    public static func summary<Person: Hashable>(_ current: [Person: Item]) -> [(emoji: String, count: Int)] {
        var count: [String: Int] = [:], first: [String: TimerPolicy.Change] = [:]
        for item in current.values {
            guard let emoji = item.emoji else { continue }
            count[emoji, default: 0] += 1
            if let seen = first[emoji], !TimerPolicy.replaces(seen, item.order) { continue }
            first[emoji] = item.order
        }
        return count.keys.sorted { a, b in
            if count[a]! != count[b]! { return count[a]! > count[b]! }
            return TimerPolicy.replaces(first[b]!, first[a]!)
        }.map { ($0, count[$0]!) }
    }

    /// "👍 2  ❤️ 1": the summary as a line shows it.
    public static func words(_ summary: [(emoji: String, count: Int)]) -> String {
        summary.map { "\($0.emoji) \($0.count)" }.joined(separator: "  ")
    }

    /// The counter of a reaction made here on a message whose items seen end at `latest`.
    public static func next(after latest: TimerPolicy.Change?) -> UInt64? { TimerPolicy.next(after: latest) }
}

/// Edits (`rchat edit`): Signal's limits. One's own text messages only, sent within the last
/// 24 hours, at most 10 times; a receiver takes an edit that the relay held at most 48 hours
/// after it held the original, from its author only. The text shown is the latest edit's in
/// the order (`TimerPolicy.Change`), so every side ends on the same text.
public enum EditPolicy {
    public static let sendWindow: Int64 = 24 * 3600
    public static let acceptWindow: Int64 = 48 * 3600
    public static let maximumEdits = 10

    /// Why this side may not edit a message, in the one line a command prints.
    public enum Refusal: Equatable, Sendable, CustomStringConvertible {
        case notYours, notText, tooLate, tooManyEdits

        public var description: String {
            switch self {
            case .notYours: "only your own messages can be edited"
            case .notText: "only a text message can be edited"
            case .tooLate: "a message can be edited for 24 hours after it was sent"
            case .tooManyEdits: "a message can be edited at most 10 times"
            }
        }
    }

    /// Whether this side may edit its message: outgoing, text (or a reply), written at
    /// `writtenAt`, edited `edits` times so far, at `now`.
    public static func refusal(outgoing: Bool, isText: Bool, writtenAt: Int64, edits: Int, now: Int64) -> Refusal? {
        guard outgoing else { return .notYours }
        guard isText else { return .notText }
        guard now - writtenAt <= sendWindow else { return .tooLate }
        guard edits < maximumEdits else { return .tooManyEdits }
        return nil
    }

    /// Whether a receiver takes an edit: from the original's author, of a text, held by the
    /// relay no more than 48 hours after the original was (both times the relay's), and not
    /// past the edits an author may make.
    public static func accepts(fromAuthor: Bool, isText: Bool, originalHeldAt: Int64, editHeldAt: Int64, editsTaken: Int) -> Bool {
        fromAuthor && isText && editHeldAt - originalHeldAt <= acceptWindow && editsTaken < maximumEdits
    }

    /// The text in force: the original's, or the latest edit's in the order.
    public static func current(original: String, edits: [(text: String, order: TimerPolicy.Change)]) -> String {
        var latest: (text: String, order: TimerPolicy.Change)?
        for edit in edits where TimerPolicy.replaces(edit.order, latest?.order) { latest = edit }
        return latest?.text ?? original
    }
}

/// An action that arrives before its message (the message still on its way, or never to
/// come) is kept and applies once the message is there — for 72 hours (the relay's own
/// limit) and at most 1,000 per conversation; past either it is dropped.
public enum ActionWaiting {
    public static let window: Int64 = 72 * 3600
    public static let perConversation = 1_000
}
