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

extension ReactionPolicy {
    /// The reaction one key gives (`+` in the view): a thumbs up, as most messengers' first.
    public static let quickReaction = "\u{1F44D}"
}

/// Edits (`rchat edit`): Signal's limits. One's own text messages only, sent within the last
/// 24 hours, at most 10 times; a receiver takes an edit that the relay held at most 48 hours
/// after it held the original, from its author only. The text shown is the latest edit's in
/// the order (`TimerPolicy.Change`) among the first 10 in that order, so every side ends on
/// the same text whatever order the edits came in.
public enum EditPolicy {
    public static let sendWindow: Int64 = 24 * 3600
    public static let acceptWindow: Int64 = 48 * 3600
    public static let maximumEdits = 10
    /// The longest text an edit carries: what leaves its encoding (kind, control kind, id,
    /// counter, text) within `MessageContent.maximumEncodedBytes`.
    public static let maximumTextBytes = MessageContent.maximumTextBytes - 2 - MessageID.byteCount - 8 + 1

    /// Why this side may not edit a message, in the one line a command prints.
    public enum Refusal: Equatable, Sendable, CustomStringConvertible {
        case notYours, notText, tooLate, tooManyEdits, deleted

        public var description: String {
            switch self {
            case .notYours: "only your own messages can be edited"
            case .notText: "only a text message can be edited"
            case .tooLate: "a message can be edited for 24 hours after it was sent"
            case .tooManyEdits: "a message can be edited at most 10 times"
            case .deleted: "a message deleted for everyone cannot be edited"
            }
        }
    }

    /// Whether a content is what an edit may change: a text or a reply.
    public static func isEditable(_ content: MessageContent) -> Bool {
        switch content {
        case .text, .reply: true
        default: false
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
    /// relay no more than 48 hours after the original was (both times the relay's). How many
    /// count is `counted`'s to say, by the order, not by the order they came in: a count at
    /// arrival would keep different edits on sides that got them in different orders.
    public static func accepts(fromAuthor: Bool, isText: Bool, originalHeldAt: Int64, editHeldAt: Int64) -> Bool {
        fromAuthor && isText && editHeldAt - originalHeldAt <= acceptWindow
    }

    /// The edits that count, in the order: the first 10 (an author makes no more; what a
    /// hostile one sends past them is the same surplus on every side).
    public static func counted<Edit>(_ edits: [Edit], order: (Edit) -> TimerPolicy.Change) -> [Edit] {
        Array(edits.sorted { TimerPolicy.replaces(order($1), order($0)) }.prefix(maximumEdits))
    }

    /// The edits past the first 10 in the order: kept by no side, so a receiver deletes them.
    public static func surplus<Edit>(_ edits: [Edit], order: (Edit) -> TimerPolicy.Change) -> [Edit] {
        Array(edits.sorted { TimerPolicy.replaces(order($1), order($0)) }.dropFirst(maximumEdits))
    }

    /// The text in force: the original's, or the latest counted edit's in the order.
    public static func current(original: String, edits: [(text: String, order: TimerPolicy.Change)]) -> String {
        counted(edits, order: \.order).last?.text ?? original
    }

    /// The counter of an edit made here on a message whose edits seen end at `latest`.
    public static func next(after latest: TimerPolicy.Change?) -> UInt64? { TimerPolicy.next(after: latest) }
}

/// Delete for everyone (`rchat unsend`): one's own messages, sent within the last 24 hours;
/// a receiver takes it from the message's author only, held by the relay at most 48 hours
/// after the message was. Every side then keeps nothing of the message but its place.
public enum UnsendPolicy {
    public static let sendWindow: Int64 = 24 * 3600
    public static let acceptWindow: Int64 = 48 * 3600

    public enum Refusal: Equatable, Sendable, CustomStringConvertible {
        case notYours, tooLate, alreadyDeleted, notAMessage

        public var description: String {
            switch self {
            case .notYours: "only your own messages can be deleted for everyone"
            case .tooLate: "a message can be deleted for everyone for 24 hours after it was sent"
            case .alreadyDeleted: "that message is deleted already"
            case .notAMessage: "only a message can be deleted for everyone"
            }
        }
    }

    /// Whether this side may delete its message for everyone.
    public static func refusal(outgoing: Bool, content: MessageContent, writtenAt: Int64, now: Int64) -> Refusal? {
        guard outgoing else { return .notYours }
        switch content {
        case .unsent: return .alreadyDeleted
        case .text, .reply, .attachment: break
        case .control, .newer: return .notAMessage
        }
        guard now - writtenAt <= sendWindow else { return .tooLate }
        return nil
    }

    /// Whether a receiver takes it: from the message's author, held by the relay no more than
    /// 48 hours after the message was (both the relay's times), of a message a person wrote —
    /// or of one that came as the deleted mark already (queued when it was deleted): kept,
    /// with nothing left to do.
    public static func accepts(fromAuthor: Bool, content: MessageContent, originalHeldAt: Int64, unsendHeldAt: Int64) -> Bool {
        switch content {
        case .text, .reply, .attachment: return fromAuthor && unsendHeldAt - originalHeldAt <= acceptWindow
        case .unsent: return fromAuthor
        case .control, .newer: return false
        }
    }
}

/// An action that arrives before its message (the message still on its way, or never to
/// come) is kept and applies once the message is there — for 72 hours (the relay's own
/// limit) and at most 1,000 per conversation; past either it is dropped.
public enum ActionWaiting {
    public static let window: Int64 = 72 * 3600
    public static let perConversation = 1_000
}
