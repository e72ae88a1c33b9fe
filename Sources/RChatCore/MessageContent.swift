/// What a message carries: the same value in the store (`messages.content`), in the
/// outbox, in an envelope's body and in a message request.
///
/// Byte layout (`encoded()`, `init(decoding:)`), big-endian, one kind byte then its fields:
///
///     u8 kind = 1   text
///         ..        UTF-8, to the end (0 … 65,536 bytes)
///     u8 kind = 2   attachment
///         u8        attachment kind: 1 photo, 2 voice, 3 file
///         u8        name length (1 … 255), then the name, UTF-8
///         u64       size of the plaintext file in bytes (at most 2^40)
///         32        hash of the plaintext file
///         32        the key the file is encrypted with
///     u8 kind = 3   control item
///         u8        control kind: 1 disappearing-timer change, 2 group changes, 3 reaction,
///                   4 edit, 5 delete for everyone
///       1:
///         u32       the timer in seconds: 0 (off) or one of `DisappearingTimer`'s
///         u64       the change's counter (`TimerPolicy.Change`), 1 … 2^62; absent: 0
///                   (an rChat before counters; counter 0 is always written this way)
///       2:          changes of a group's membership log (`MembershipChange`), in a group
///                   message (the envelope names the group): the log so far, the newest last
///         u8        how many (1 … 255), then each: u16 length (1 … 65,535), its bytes
///       3:          a reaction to a message of the same conversation (`ReactionPolicy`)
///         16        the message's id
///         u64       the reaction's counter (`TimerPolicy.Change`), 1 … 2^62
///         ..        the emoji, UTF-8, to the end: one (`ReactionPolicy.isEmoji`), or
///                   nothing for a reaction taken back
///       4:          an edit of its author's text message (or reply) (`EditPolicy`)
///         16        the message's id
///         u64       the edit's counter (`TimerPolicy.Change`), 1 … 2^62
///         ..        the new text, UTF-8, to the end (0 … 65,511 bytes)
///       5:          delete for everyone of its author's message (`UnsendPolicy`)
///         16        the message's id
///
///     u8 kind = 4   reply: text that quotes a message of the same conversation
///         16        the quoted message's id
///         ..        UTF-8, to the end (0 … 65,520 bytes: the encoding fits a text's bound)
///
///     u8 kind = 5   a message deleted for everyone: what the store keeps in its place
///                   (never sent: an envelope that carries it is refused)
///
///     u8 kind = 0   an envelope of a kind this version does not know, as it came
///         u8        its envelope kind (13 … 127: an item, `EnvelopeKind.isNewerItem`)
///         ..        its body, to the end
///
/// What a later version writes and this one does not know — a content kind other than
/// 1 … 5, an attachment kind other than 1 … 3, a control kind other than 1 … 5, a timer that is
/// not one of `DisappearingTimer` — decodes as `.newer`, keeping every byte: the store
/// keeps it whole, the conversation shows `newerText`, and a later version reads it from
/// what was stored. Decoding refuses (with the cause, `MessageContentError`) only what no
/// version writes: nothing at all, more than `maximumEncodedBytes`, and for the kinds this
/// version knows a field cut short, a length over its bound, text or a name that is not
/// UTF-8, or any byte after the last field. The store keeps these bytes as they are
/// written and arrive, so a value is encoded once and never again.
///
/// Only text and replies are sent by this version. An attachment or control item that arrives is kept as
/// it came and shown as a one-line row saying what this version cannot do with it
/// (`displayText`); a Delivered receipt for it means the item was stored, nothing more.
public enum MessageContent: Equatable, Sendable, CustomStringConvertible {
    case text(String)
    /// Text quoting another message of its conversation, named by id.
    case reply(Reply)
    case attachment(Attachment)
    case control(ControlItem)
    /// Something a later rChat wrote that this version cannot show, kept byte for byte.
    case newer(NewerItem)
    /// What is left of a message its author deleted for everyone (`rchat unsend`): nothing of
    /// it but its place. The store writes it; an envelope carries it only where the message
    /// was still queued (or resent) when it was deleted, so a member it had not reached stores
    /// the mark alone.
    case unsent

    /// The line a conversation shows where a message deleted for everyone was.
    public static let unsentText = "This message was deleted."

    /// The line a conversation shows for what needs a later version.
    public static let newerText = "This message needs a newer rChat to be shown."

    public var isAttachment: Bool {
        if case .attachment = self { return true }
        return false
    }

    /// What a person wrote: a text's or a reply's (search, alerts, the quote of a reply).
    public var writtenText: String? {
        switch self {
        case .text(let text): text
        case .reply(let reply): reply.text
        default: nil
        }
    }

    /// The message an action (a reaction) is about: such an item is not shown in its
    /// conversation, but folded into that message.
    public var actionTarget: MessageID? {
        switch self {
        case .control(.reaction(let target, _, _)), .control(.edit(let target, _, _)), .control(.unsend(let target)): target
        default: nil
        }
    }

    /// An action's kind in words, for a log line or a refusal ("reaction", "edit", "delete").
    public var actionName: String? {
        switch self {
        case .control(.reaction): "reaction"
        case .control(.edit): "edit"
        case .control(.unsend): "delete for everyone"
        default: nil
        }
    }

    /// What it is, with its article, for a log line: "a reply", "an edit", "a message".
    public var itemWords: String {
        switch self {
        case .reply: "a reply"
        case .control(.edit): "an edit"
        default: actionName.map { "a " + $0 } ?? "a message"
        }
    }

    /// The message this one names, if any: the one a reply quotes, or an action is about.
    /// It must be of the same conversation (`messageElsewhere`: one of another is dropped).
    public var refersTo: MessageID? { quoted ?? actionTarget }

    /// The message this one quotes, if it is a reply.
    public var quoted: MessageID? {
        if case .reply(let reply) = self { return reply.target }
        return nil
    }

    /// The longest text a content may carry: what fits one relay payload.
    public static let maximumTextBytes = 64 * 1024
    /// The longest encoding: a text's (an attachment's is at most 330 bytes).
    public static let maximumEncodedBytes = 1 + maximumTextBytes

    enum Kind: UInt8 {
        case newerEnvelope = 0, text = 1, attachment = 2, control = 3, reply = 4, unsent = 5
    }

    public func encoded() -> [UInt8] {
        switch self {
        case .text(let text):
            var w = ByteWriter(capacity: 1 + text.utf8.count)
            w.u8(Kind.text.rawValue)
            w.raw(text.utf8)
            return w.bytes
        case .reply(let reply):
            precondition(reply.text.utf8.count <= Reply.maximumTextBytes, "a reply's text fits one content")
            var w = ByteWriter(capacity: 1 + MessageID.byteCount + reply.text.utf8.count)
            w.u8(Kind.reply.rawValue)
            w.raw(reply.target.bytes)
            w.raw(reply.text.utf8)
            return w.bytes
        case .attachment(let a):
            var w = ByteWriter(capacity: 3 + a.name.utf8.count + 8 + Attachment.hashBytes + Attachment.keyBytes)
            w.u8(Kind.attachment.rawValue)
            w.u8(a.kind.rawValue)
            precondition((1...Attachment.maximumNameBytes).contains(a.name.utf8.count), "an attachment's name is 1 to 255 bytes")
            w.u8(UInt8(a.name.utf8.count))
            w.raw(a.name.utf8)
            precondition(a.size <= Attachment.maximumSize, "an attachment is at most 2^40 bytes")
            w.u64(a.size)
            precondition(a.contentHash.count == Attachment.hashBytes && a.key.count == Attachment.keyBytes)
            w.raw(a.contentHash)
            w.raw(a.key)
            return w.bytes
        case .control(.timerChanged(let timer, let counter)):
            var w = ByteWriter(capacity: 14)
            w.u8(Kind.control.rawValue)
            w.u8(ControlItem.Kind.timerChanged.rawValue)
            w.u32(timer.rawValue)
            precondition(counter <= TimerPolicy.maximumCounter, "a timer change's counter is at most 2^62")
            if counter > 0 { w.u64(counter) }
            return w.bytes
        case .control(.reaction(let target, let emoji, let counter)):
            precondition((1...TimerPolicy.maximumCounter).contains(counter) && emoji.map(ReactionPolicy.isEmoji) != false,
                          "a reaction's counter is 1 … 2^62, its emoji one")
            var w = ByteWriter(capacity: 26 + (emoji?.utf8.count ?? 0))
            w.u8(Kind.control.rawValue)
            w.u8(ControlItem.Kind.reaction.rawValue)
            w.raw(target.bytes)
            w.u64(counter)
            if let emoji { w.raw(emoji.utf8) }
            return w.bytes
        case .control(.edit(let target, let text, let counter)):
            precondition((1...TimerPolicy.maximumCounter).contains(counter) && text.utf8.count <= EditPolicy.maximumTextBytes,
                          "an edit's counter is 1 … 2^62, its text fits one content")
            var w = ByteWriter(capacity: 26 + text.utf8.count)
            w.u8(Kind.control.rawValue)
            w.u8(ControlItem.Kind.edit.rawValue)
            w.raw(target.bytes)
            w.u64(counter)
            w.raw(text.utf8)
            return w.bytes
        case .control(.unsend(let target)):
            var w = ByteWriter(capacity: 18)
            w.u8(Kind.control.rawValue)
            w.u8(ControlItem.Kind.unsend.rawValue)
            w.raw(target.bytes)
            return w.bytes
        case .unsent:
            return [Kind.unsent.rawValue]
        case .control(.groupChanges(let changes)):
            precondition((1...255).contains(changes.count) && changes.allSatisfy { (1...0xffff).contains($0.count) },
                         "1 to 255 group changes of 1 to 65,535 bytes")
            var w = ByteWriter(capacity: 3 + changes.reduce(0) { $0 + 2 + $1.count })
            w.u8(Kind.control.rawValue)
            w.u8(ControlItem.Kind.groupChanges.rawValue)
            w.u8(UInt8(changes.count))
            for change in changes { w.short(change) }
            precondition(w.bytes.count <= Self.maximumEncodedBytes, "group changes fit one content")
            return w.bytes
        case .newer(.content(let bytes)):
            return bytes
        case .newer(.envelope(let kind, let body)):
            return [Kind.newerEnvelope.rawValue, kind] + body
        }
    }

    /// Reads what `encoded()` wrote; anything else is refused with its cause.
    public init(decoding bytes: [UInt8]) throws(MessageContentError) {
        guard let first = bytes.first else { throw .truncated(field: "kind") }
        guard bytes.count <= Self.maximumEncodedBytes else {
            throw .tooLong(field: "content", bytes: bytes.count, maximum: Self.maximumEncodedBytes)
        }
        guard let kind = Kind(rawValue: first) else {
            self = .newer(.content(bytes))
            return
        }
        var r = ContentReader(bytes: bytes, offset: 1)
        switch kind {
        case .newerEnvelope:
            let envelopeKind = try r.u8("envelope kind")
            guard NewerItem.isEnvelopeKind(envelopeKind) else { throw .notNewer(envelopeKind: envelopeKind) }
            self = .newer(.envelope(kind: envelopeKind, body: Array(bytes[2...])))
        case .text:
            guard let text = String(validating: bytes[1...], as: UTF8.self) else { throw .notUTF8(field: "text") }
            self = .text(text)
        case .unsent:
            try r.end()
            self = .unsent
        case .reply:
            let target = try r.messageID("quoted id")
            guard let text = String(validating: bytes[(1 + MessageID.byteCount)...], as: UTF8.self) else { throw .notUTF8(field: "text") }
            self = .reply(Reply(target: target, text: text))
        case .attachment:
            let rawKind = try r.u8("attachment kind")
            guard let attachmentKind = AttachmentKind(rawValue: rawKind) else {
                self = .newer(.content(bytes))
                return
            }
            let nameBytes = Int(try r.u8("name length"))
            guard nameBytes > 0 else { throw .empty(field: "name") }
            guard let name = String(validating: try r.bytes(nameBytes, "name"), as: UTF8.self) else { throw .notUTF8(field: "name") }
            let size = try r.u64("size")
            guard size <= Attachment.maximumSize else { throw .tooLarge(field: "size", value: size, maximum: Attachment.maximumSize) }
            let hash = Array(try r.bytes(Attachment.hashBytes, "hash"))
            let key = Array(try r.bytes(Attachment.keyBytes, "key"))
            try r.end()
            self = .attachment(Attachment(kind: attachmentKind, name: name, size: size, contentHash: hash, key: key))
        case .control:
            let rawKind = try r.u8("control kind")
            guard let controlKind = ControlItem.Kind(rawValue: rawKind) else {
                self = .newer(.content(bytes))
                return
            }
            switch controlKind {
            case .timerChanged:
                let seconds = try r.u32("timer")
                guard let timer = DisappearingTimer(rawValue: seconds) else {
                    self = .newer(.content(bytes))
                    return
                }
                var counter: UInt64 = 0
                if !r.atEnd {
                    counter = try r.counter()
                }
                try r.end()
                self = .control(.timerChanged(timer, counter: counter))
            case .groupChanges:
                let count = Int(try r.u8("number of changes"))
                guard count > 0 else { throw .empty(field: "changes") }
                var changes: [[UInt8]] = []
                for _ in 0..<count {
                    let length = Int(try r.u16("change length"))
                    guard length > 0 else { throw .empty(field: "change") }
                    changes.append(Array(try r.bytes(length, "change")))
                }
                try r.end()
                self = .control(.groupChanges(changes))
            case .reaction:
                let target = try r.messageID("reacted-to id")
                let counter = try r.counter()
                let rest = try r.bytes(bytes.count - r.offset, "emoji")
                guard let emoji = String(validating: rest, as: UTF8.self) else { throw .notUTF8(field: "emoji") }
                guard emoji.isEmpty || ReactionPolicy.isEmoji(emoji) else { throw .notAnEmoji }
                self = .control(.reaction(target: target, emoji: emoji.isEmpty ? nil : emoji, counter: counter))
            case .edit:
                let target = try r.messageID("edited id")
                let counter = try r.counter()
                guard let text = String(validating: try r.bytes(bytes.count - r.offset, "text"), as: UTF8.self) else {
                    throw .notUTF8(field: "text")
                }
                guard !text.isEmpty else { throw .empty(field: "text") }
                self = .control(.edit(target: target, text: text, counter: counter))
            case .unsend:
                let target = try r.messageID("deleted id")
                try r.end()
                self = .control(.unsend(target: target))
            }
        }
    }

    /// The message's text, or for anything else the one line a conversation shows for it.
    /// No key or hash, ever.
    public func displayText(direction: Direction, peer: String = "They") -> String {
        switch self {
        case .text(let text):
            return text
        case .reply(let reply):
            return reply.text
        case .attachment(let a):
            return "\(a.kind.title): \(a.name) (\(ByteCount.display(a.size)))"
        case .control(.timerChanged(let timer, _)):
            let who = direction == .outgoing ? "You" : peer
            guard let phrase = timer.phrase else { return "\(who) turned off disappearing messages." }
            return "\(who) set disappearing messages to \(phrase)."
        case .control(.groupChanges(let changes)):
            let who = direction == .outgoing ? "You" : peer
            // A change travels with the log before it (so a new member can follow): the
            // last is what it did.
            guard let last = changes.last.flatMap({ try? MembershipChange(decoding: $0) }) else { return "\(who) changed the group." }
            if case .rekey = last.action { return who == "You" ? "Your keys changed." : RecoveryRows.keysChanged(name: who, count: 0) }
            return "\(who) \(last.summary)."
        case .control(.reaction(_, let emoji, _)):
            let who = direction == .outgoing ? "You" : peer
            return emoji.map { "\(who) reacted \($0)." } ?? "\(who) took back a reaction."
        case .control(.edit):
            return "\(direction == .outgoing ? "You" : peer) edited a message."
        case .control(.unsend):
            return "\(direction == .outgoing ? "You" : peer) deleted a message."
        case .unsent:
            return Self.unsentText
        case .newer:
            return Self.newerText
        }
    }

    /// What a log line may say about it: never text, name, key or hash.
    public var description: String {
        switch self {
        case .text(let text): return "text (\(text.utf8.count) bytes)"
        case .reply(let reply): return "reply (\(reply.text.utf8.count) bytes)"
        case .attachment(let a): return "\(a.kind) attachment (\(a.size) bytes)"
        case .control(.timerChanged(let timer, _)): return "disappearing timer change (\(timer.rawValue) s)"
        case .control(.groupChanges(let changes)): return "\(changes.count) group change(s)"
        case .control(.reaction(_, let emoji, _)): return emoji == nil ? "reaction taken back" : "reaction"
        case .control(.edit(_, let text, _)): return "edit (\(text.utf8.count) bytes)"
        case .control(.unsend): return "delete for everyone"
        case .unsent: return "deleted for everyone"
        case .newer(.content(let bytes)): return "content of a newer kind \(bytes[0]) (\(bytes.count) bytes)"
        case .newer(.envelope(let kind, let body)): return "an envelope of a newer kind \(kind) (\(body.count) bytes)"
        }
    }
}

/// What a later version wrote, as it came: a message's content of a kind this version does
/// not know (`content`: the whole encoding), or a whole envelope body of an item kind this
/// version does not know (`envelope`).
public enum NewerItem: Equatable, Sendable {
    case content([UInt8])
    case envelope(kind: UInt8, body: [UInt8])

    /// Envelope kinds a later version may give an item to be kept (a message, a reaction…):
    /// 13 … 127. Kinds 128 … 255 are for what may pass unseen (e.g. a typing notice): a
    /// version that does not know one drops it. 1 … 12 are this version's.
    public static let envelopeKinds: ClosedRange<UInt8> = 13...127

    public static func isEnvelopeKind(_ kind: UInt8) -> Bool { envelopeKinds.contains(kind) }
}

public enum AttachmentKind: UInt8, Sendable, CaseIterable {
    case photo = 1, voice = 2, file = 3

    /// What the product calls it: "Photo", "Voice message", "File".
    public var title: String {
        switch self {
        case .photo: "Photo"
        case .voice: "Voice message"
        case .file: "File"
        }
    }

    /// The word `rchat send --as` takes.
    public var word: String {
        switch self {
        case .photo: "photo"
        case .voice: "voice"
        case .file: "file"
        }
    }
}

/// Text that quotes a message of its conversation (`rchat send --reply-to`). The quote is
/// never carried: each side shows its own copy of the target, or says it has none.
public struct Reply: Equatable, Sendable {
    /// The longest text: what leaves a reply's encoding within `MessageContent.maximumEncodedBytes`.
    public static let maximumTextBytes = MessageContent.maximumTextBytes - MessageID.byteCount

    public var target: MessageID
    public var text: String

    public init(target: MessageID, text: String) {
        self.target = target
        self.text = text
    }

    /// The quote line's words when the target is not there to quote.
    public static let notFound = "Original message not found"
    public static let deleted = "Original message deleted"
}

/// A file sent through a conversation: what the message item carries (the file's
/// encrypted chunks travel apart from it).
public struct Attachment: Equatable, Sendable, CustomStringConvertible {
    public static let maximumNameBytes = 255
    public static let maximumSize: UInt64 = 1 << 40
    public static let hashBytes = 32
    public static let keyBytes = 32

    public var kind: AttachmentKind
    /// The name as the sender gave it: display text, never a path.
    public var name: String
    public var size: UInt64
    /// The hash of the plaintext file, checked before it counts as received.
    public var contentHash: [UInt8]
    /// The key the file is encrypted with.
    public var key: [UInt8]

    public init(kind: AttachmentKind, name: String, size: UInt64, contentHash: [UInt8], key: [UInt8]) {
        self.kind = kind; self.name = name; self.size = size; self.contentHash = contentHash; self.key = key
    }

    /// Without the key (and so never logged with it).
    public var description: String { "Attachment(\(kind), \(size) bytes)" }
}

/// Items a conversation carries that are not written by a person.
public enum ControlItem: Equatable, Sendable {
    /// The conversation's disappearing-message timer was set (or turned off), with the
    /// change's counter (`TimerPolicy.Change`; 0: from an rChat before counters).
    case timerChanged(DisappearingTimer, counter: UInt64 = 0)
    /// Changes of a group's membership log, as their authors signed them (in a group
    /// message: the envelope names the group). What a member takes is `GroupLog`'s to say.
    case groupChanges([[UInt8]])
    /// A reaction to the message `target` of the same conversation: the emoji, or nil for
    /// one taken back, with its counter (`ReactionPolicy`: each person's latest counts).
    case reaction(target: MessageID, emoji: String?, counter: UInt64)
    /// An edit of the message `target` of the same conversation, by its author: its new
    /// text, with its counter (`EditPolicy`: the latest counts).
    case edit(target: MessageID, text: String, counter: UInt64)
    /// The message `target` of the same conversation, deleted for everyone by its author
    /// (`UnsendPolicy`).
    case unsend(target: MessageID)

    enum Kind: UInt8 {
        case timerChanged = 1
        case groupChanges = 2
        case reaction = 3
        case edit = 4
        case unsend = 5
    }
}

/// The timers a conversation can have, in seconds.
public enum DisappearingTimer: UInt32, Sendable, CaseIterable {
    case off = 0
    case thirtySeconds = 30
    case fiveMinutes = 300
    case oneHour = 3_600
    case eightHours = 28_800
    case oneDay = 86_400
    case oneWeek = 604_800
    case fourWeeks = 2_419_200

    /// The words `rchat timer` and `/timer` take: 30s, 5m, 1h, 8h, 1d, 1w, 4w, off.
    public var word: String {
        switch self {
        case .off: "off"
        case .thirtySeconds: "30s"
        case .fiveMinutes: "5m"
        case .oneHour: "1h"
        case .eightHours: "8h"
        case .oneDay: "1d"
        case .oneWeek: "1w"
        case .fourWeeks: "4w"
        }
    }

    public init?(word: String) {
        guard let timer = Self.allCases.first(where: { $0.word == word }) else { return nil }
        self = timer
    }

    /// The one line for a duration that is not one of them.
    public static var wordsRefusal: String {
        "a disappearing-message timer is one of: " + allCases.map(\.word).joined(separator: ", ")
    }

    /// "1 hour", …; nil for off.
    public var phrase: String? {
        switch self {
        case .off: return nil
        case .thirtySeconds: return "30 seconds"
        case .fiveMinutes: return "5 minutes"
        case .oneHour: return "1 hour"
        case .eightHours: return "8 hours"
        case .oneDay: return "1 day"
        case .oneWeek: return "1 week"
        case .fourWeeks: return "4 weeks"
        }
    }
}

/// Why bytes are not a `MessageContent`.
public enum MessageContentError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Kind 0 with an envelope kind that is not one a later version may give an item.
    case notNewer(envelopeKind: UInt8)
    /// The input ended inside this field.
    case truncated(field: String)
    case empty(field: String)
    case tooLong(field: String, bytes: Int, maximum: Int)
    case tooLarge(field: String, value: UInt64, maximum: UInt64)
    case notUTF8(field: String)
    /// A reaction whose emoji is not one (`ReactionPolicy.isEmoji`).
    case notAnEmoji
    /// Bytes after the last field.
    case trailingBytes(Int)

    public var description: String {
        switch self {
        case .notNewer(let k): return "a kept envelope of kind \(k), which is not one a later version gives an item"
        case .truncated(let field): return "message content cut short in its \(field)"
        case .empty(let field): return "message content with an empty \(field)"
        case let .tooLong(field, bytes, maximum): return "message content \(field) of \(bytes) bytes (at most \(maximum))"
        case let .tooLarge(field, value, maximum): return "message content \(field) \(value) (at most \(maximum))"
        case .notUTF8(let field): return "message content \(field) is not UTF-8"
        case .notAnEmoji: return "a reaction whose emoji is not one emoji"
        case .trailingBytes(let n): return "\(n) bytes after the message content"
        }
    }
}

/// Bounds-checked reads that name the field they were reading.
private struct ContentReader {
    let bytes: [UInt8]
    var offset: Int

    mutating func bytes(_ count: Int, _ field: String) throws(MessageContentError) -> ArraySlice<UInt8> {
        guard count <= bytes.count - offset else { throw .truncated(field: field) }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    mutating func u8(_ field: String) throws(MessageContentError) -> UInt8 { try bytes(1, field).first! }

    mutating func u16(_ field: String) throws(MessageContentError) -> UInt16 {
        try bytes(2, field).reduce(0) { $0 << 8 | UInt16($1) }
    }

    mutating func u32(_ field: String) throws(MessageContentError) -> UInt32 {
        try bytes(4, field).reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func u64(_ field: String) throws(MessageContentError) -> UInt64 {
        try bytes(8, field).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A logical counter (`TimerPolicy`): 1 to 2^62.
    mutating func counter() throws(MessageContentError) -> UInt64 {
        let counter = try u64("counter")
        guard counter > 0 else { throw .empty(field: "counter") }
        guard counter <= TimerPolicy.maximumCounter else {
            throw .tooLarge(field: "counter", value: counter, maximum: TimerPolicy.maximumCounter)
        }
        return counter
    }

    /// The id of the message an item names.
    mutating func messageID(_ field: String) throws(MessageContentError) -> MessageID {
        guard let id = MessageID(bytes: try bytes(MessageID.byteCount, field)) else { throw .truncated(field: field) }
        return id
    }

    var atEnd: Bool { offset >= bytes.count }

    func end() throws(MessageContentError) {
        if offset < bytes.count { throw .trailingBytes(bytes.count - offset) }
    }
}
