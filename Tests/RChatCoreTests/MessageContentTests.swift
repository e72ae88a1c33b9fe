import XCTest
@testable import RChatCore

/// `MessageContent`'s byte layout: what the store keeps and the wire carries.
final class MessageContentTests: XCTestCase {
    let photo = Attachment(kind: .photo, name: "beach.jpg", size: 123_456,
                           contentHash: [UInt8](repeating: 0xaa, count: 32), key: [UInt8](repeating: 0x5e, count: 32))

    func testEachCaseHasItsDocumentedBytesAndComesBack() throws {
        XCTAssertEqual(MessageContent.text("hé").encoded(), [1, 0x68, 0xc3, 0xa9])
        XCTAssertEqual(MessageContent.text("").encoded(), [1])
        XCTAssertEqual(MessageContent.control(.timerChanged(.oneHour)).encoded(), [3, 1, 0, 0, 0x0e, 0x10])
        XCTAssertEqual(MessageContent.control(.timerChanged(.off)).encoded(), [3, 1, 0, 0, 0, 0])
        // A counter follows the timer (counter 0, an older rChat's change, is written without it).
        XCTAssertEqual(MessageContent.control(.timerChanged(.oneHour, counter: 0)).encoded(), [3, 1, 0, 0, 0x0e, 0x10])
        XCTAssertEqual(MessageContent.control(.timerChanged(.oneHour, counter: 0x0102)).encoded(),
                       [3, 1, 0, 0, 0x0e, 0x10, 0, 0, 0, 0, 0, 0, 1, 2])
        let attachment = MessageContent.attachment(photo).encoded()
        XCTAssertEqual(Array(attachment.prefix(12)), [2, 1, 9] + Array("beach.jpg".utf8))
        XCTAssertEqual(Array(attachment[12..<20]), [0, 0, 0, 0, 0, 0x01, 0xe2, 0x40])
        XCTAssertEqual(Array(attachment.suffix(64)), photo.contentHash + photo.key)
        XCTAssertEqual(attachment.count, 1 + 1 + 1 + 9 + 8 + 32 + 32)

        var all: [MessageContent] = [.text(""), .text("hello\nworld 🙂"), .text(String(repeating: "x", count: MessageContent.maximumTextBytes))]
        all += AttachmentKind.allCases.map { kind in
            var a = photo
            a.kind = kind
            return .attachment(a)
        }
        all.append(.attachment(Attachment(kind: .file, name: String(repeating: "é", count: 127) + "a", size: Attachment.maximumSize,
                                          contentHash: [UInt8](repeating: 1, count: 32), key: [UInt8](repeating: 2, count: 32))))
        all += DisappearingTimer.allCases.map { .control(.timerChanged($0)) }
        all += [1, 2, 0xffff_ffff, TimerPolicy.maximumCounter].map { .control(.timerChanged(.oneWeek, counter: $0)) }
        XCTAssertEqual(MessageContent.control(.groupChanges([[0xaa, 0xbb], [7]])).encoded(), [3, 2, 2, 0, 2, 0xaa, 0xbb, 0, 1, 7])
        all += [.control(.groupChanges([[1]])), .control(.groupChanges(Array(repeating: [UInt8](repeating: 9, count: 250), count: 255))),
                .control(.groupChanges([[UInt8](repeating: 3, count: MessageContent.maximumEncodedBytes - 5)]))]
        for content in all {
            XCTAssertEqual(try MessageContent(decoding: content.encoded()), content, "\(content)")
        }
    }

    func testEveryMalformedInputIsRefusedWithItsCause() {
        let attachment = MessageContent.attachment(photo).encoded()
        let timer = MessageContent.control(.timerChanged(.oneDay)).encoded()
        var badName = attachment
        badName[3] = 0xff
        var noName = [UInt8](attachment.prefix(2)) + [0]
        noName += attachment[12...]
        var hugeSize = attachment
        hugeSize[14] = 0x01  // 2^40 more
        let cases: [([UInt8], MessageContentError)] = [
            ([], .truncated(field: "kind")),
            ([0], .truncated(field: "envelope kind")),
            ([0, 12], .notNewer(envelopeKind: 12)),
            ([0, 128, 1], .notNewer(envelopeKind: 128)),
            ([1] + [UInt8](repeating: 0x61, count: MessageContent.maximumTextBytes + 1),
             .tooLong(field: "content", bytes: MessageContent.maximumEncodedBytes + 1, maximum: MessageContent.maximumEncodedBytes)),
            ([9] + [UInt8](repeating: 0, count: MessageContent.maximumTextBytes + 1),
             .tooLong(field: "content", bytes: MessageContent.maximumEncodedBytes + 1, maximum: MessageContent.maximumEncodedBytes)),
            ([1, 0xc3], .notUTF8(field: "text")),
            ([2], .truncated(field: "attachment kind")),
            ([2, 1], .truncated(field: "name length")),
            (noName, .empty(field: "name")),
            (Array(attachment.prefix(8)), .truncated(field: "name")),
            (badName, .notUTF8(field: "name")),
            (Array(attachment.prefix(15)), .truncated(field: "size")),
            (hugeSize, .tooLarge(field: "size", value: 1 << 40 | 123_456, maximum: Attachment.maximumSize)),
            (Array(attachment.prefix(40)), .truncated(field: "hash")),
            (Array(attachment.dropLast()), .truncated(field: "key")),
            (attachment + [0], .trailingBytes(1)),
            ([3], .truncated(field: "control kind")),
            ([3, 1, 0, 0], .truncated(field: "timer")),
            (timer + [0, 0], .truncated(field: "counter")),
            (timer + [0, 0, 0, 0, 0, 0, 0, 0], .empty(field: "counter")),
            (timer + [0x40, 0, 0, 0, 0, 0, 0, 1], .tooLarge(field: "counter", value: 1 << 62 | 1, maximum: TimerPolicy.maximumCounter)),
            (timer + [0, 0, 0, 0, 0, 0, 0, 1, 0], .trailingBytes(1)),
            ([3, 2], .truncated(field: "number of changes")),
            ([3, 2, 0], .empty(field: "changes")),
            ([3, 2, 1, 0], .truncated(field: "change length")),
            ([3, 2, 1, 0, 0], .empty(field: "change")),
            ([3, 2, 1, 0, 2, 0xaa], .truncated(field: "change")),
            ([3, 2, 1, 0, 1, 0xaa, 0], .trailingBytes(1)),
        ]
        for (bytes, cause) in cases {
            XCTAssertThrowsError(try MessageContent(decoding: bytes), "\(bytes.prefix(16))") { error in
                XCTAssertEqual(error as? MessageContentError, cause, "\(bytes.prefix(16))")
            }
        }
    }

    /// What a later version writes — a content kind, an attachment kind, a control kind, a
    /// timer this one does not know, or a whole envelope of an item kind it does not know —
    /// is kept byte for byte and shown as needing a newer rChat; a later version reads it
    /// from what was stored.
    func testWhatALaterVersionWroteIsKeptWholeAndShownAsNeedingANewerRChat() throws {
        let later: [[UInt8]] = [[6], [6, 1], [255, 0, 1, 2], [2, 4], [2, 4, 9, 9, 9], [2, 0], [3, 0], [3, 6, 0, 0, 0, 0],
                                [3, 6], [3, 1, 0, 0, 0, 31], [3, 1, 0xff, 0xff, 0xff, 0xff, 1, 2],
                                [9] + [UInt8](repeating: 7, count: MessageContent.maximumTextBytes)]
        for bytes in later {
            let content = try MessageContent(decoding: bytes)
            XCTAssertEqual(content, .newer(.content(bytes)), "\(bytes.prefix(8))")
            XCTAssertEqual(content.encoded(), bytes, "kept as it came")
        }
        for kind in [UInt8(13), 64, 127] {
            for body in [[], [1, 2, 3], [UInt8](repeating: 5, count: MessageContent.maximumEncodedBytes - 2)] as [[UInt8]] {
                let content = try MessageContent(decoding: [0, kind] + body)
                XCTAssertEqual(content, .newer(.envelope(kind: kind, body: body)))
                XCTAssertEqual(content.encoded(), [0, kind] + body)
            }
        }
        XCTAssertEqual(NewerItem.envelopeKinds, 13...127)
        for content in [MessageContent.newer(.content([6, 1])), .newer(.envelope(kind: 20, body: Array("secret".utf8)))] {
            for direction in [Direction.incoming, .outgoing] {
                XCTAssertEqual(content.displayText(direction: direction), "This message needs a newer rChat to be shown.")
            }
            XCTAssertFalse("\(content)".contains("secret"), "a log line names its kind and size only")
            XCTAssertFalse(MessageItem(id: MessageID(high: 1, low: 9), direction: .incoming, content: content, status: nil,
                                       resent: false, at: 1).showsAsRow, "shown as the sender's message, not a row")
        }
    }

    func testAFileAndWhatThisVersionCannotShowReadAsOneLineAndNeverShowTheKey() {
        XCTAssertEqual(MessageContent.text("hi").displayText(direction: .incoming), "hi")
        let line = MessageContent.attachment(photo).displayText(direction: .incoming)
        XCTAssertEqual(line, "Photo: beach.jpg (120.6 KB)")
        XCTAssertEqual(MessageContent.control(.timerChanged(.oneHour)).displayText(direction: .incoming),
                       "They set disappearing messages to 1 hour.")
        XCTAssertEqual(MessageContent.control(.timerChanged(.oneHour)).displayText(direction: .incoming, peer: "Sam"),
                       "Sam set disappearing messages to 1 hour.")
        XCTAssertEqual(MessageContent.control(.timerChanged(.off)).displayText(direction: .outgoing), "You turned off disappearing messages.")
        for content in [MessageContent.attachment(photo), .control(.timerChanged(.fourWeeks))] {
            for direction in [Direction.incoming, .outgoing] {
                XCTAssertFalse(content.displayText(direction: direction).contains("\n"))
            }
        }
        // Logs: no text, no key, no hash.
        XCTAssertEqual("\(MessageContent.text("secret words"))", "text (12 bytes)")
        XCTAssertFalse("\(MessageContent.attachment(photo))".contains("94"), "the key's bytes (0x5e = 94) are not printed")
        XCTAssertFalse("\(photo)".contains("94"))
    }

    /// A reply: kind 4, the quoted id, its text; searched, alerted and shown as text.
    func testAReplyCarriesTheQuotedIdAndItsText() throws {
        let target = MessageID(high: 0x0123_4567_89ab_cdef, low: 42)
        let reply = MessageContent.reply(Reply(target: target, text: "Yes, 7 works ✓"))
        let bytes = reply.encoded()
        XCTAssertEqual(bytes[0], 4)
        XCTAssertEqual(Array(bytes[1...16]), target.bytes)
        XCTAssertEqual(Array(bytes[17...]), Array("Yes, 7 works ✓".utf8))
        XCTAssertEqual(try MessageContent(decoding: bytes), reply)
        XCTAssertEqual(reply.quoted, target)
        XCTAssertEqual(reply.writtenText, "Yes, 7 works ✓")
        XCTAssertEqual(reply.displayText(direction: .incoming), "Yes, 7 works ✓")
        XCTAssertEqual(AlertPolicy.Kind(reply), .text("Yes, 7 works ✓"))
        XCTAssertEqual("\(reply)", "reply (16 bytes)", "never the text")
        XCTAssertEqual(try MessageContent(decoding: [4] + target.bytes), .reply(Reply(target: target, text: "")))
        XCTAssertNil(MessageContent.text("x").quoted)
        // Cut short in the id, or text that is not UTF-8: refused with the cause.
        XCTAssertThrowsError(try MessageContent(decoding: [4] + target.bytes.prefix(15))) {
            XCTAssertEqual($0 as? MessageContentError, .truncated(field: "quoted id"))
        }
        XCTAssertThrowsError(try MessageContent(decoding: [4] + target.bytes + [0xff, 0xfe])) {
            XCTAssertEqual($0 as? MessageContentError, .notUTF8(field: "text"))
        }
        // The longest reply fits what a content may be.
        let longest = MessageContent.reply(Reply(target: target, text: String(repeating: "a", count: Reply.maximumTextBytes)))
        XCTAssertEqual(longest.encoded().count, MessageContent.maximumEncodedBytes)
        XCTAssertEqual(try MessageContent(decoding: longest.encoded()), longest)
        XCTAssertEqual(MessageItem.Quote.message(author: "Alice", text: "two\nlines").words, "Alice: two lines")
        XCTAssertEqual(MessageItem.Quote.notFound.words, "Original message not found")
        XCTAssertEqual(MessageItem.Quote.deleted.words, "Original message deleted")
    }

    /// An edit: control kind 4, the message it changes, its counter, the new text (not empty);
    /// a delete for everyone: control kind 5 and the message. The mark a deleted message
    /// leaves (content kind 5) is read from the store, shown in words, silent.
    func testAnEditAndADeleteNameTheirMessage() throws {
        let target = MessageID(high: 7, low: 8)
        let edit = MessageContent.control(.edit(target: target, text: "fixed typo", counter: 2))
        let bytes = edit.encoded()
        XCTAssertEqual(Array(bytes.prefix(2)), [3, 4])
        XCTAssertEqual(Array(bytes[2..<18]), target.bytes)
        XCTAssertEqual(Array(bytes[18..<26]), [0, 0, 0, 0, 0, 0, 0, 2])
        XCTAssertEqual(Array(bytes[26...]), Array("fixed typo".utf8))
        XCTAssertEqual(try MessageContent(decoding: bytes), edit)
        XCTAssertEqual(edit.actionTarget, target)
        XCTAssertEqual(edit.actionName, "edit")
        XCTAssertEqual(edit.itemWords, "an edit")
        XCTAssertEqual(AlertPolicy.Kind(edit), .silent)

        let unsend = MessageContent.control(.unsend(target: target))
        XCTAssertEqual(unsend.encoded(), [3, 5] + target.bytes)
        XCTAssertEqual(try MessageContent(decoding: [3, 5] + target.bytes), unsend)
        XCTAssertEqual(unsend.actionTarget, target)
        XCTAssertEqual(unsend.actionName, "delete for everyone")
        XCTAssertEqual(unsend.itemWords, "a delete for everyone")
        XCTAssertEqual(AlertPolicy.Kind(unsend), .silent)

        XCTAssertEqual(MessageContent.unsent.encoded(), [5])
        XCTAssertEqual(try MessageContent(decoding: [5]), .unsent)
        XCTAssertEqual(MessageContent.unsent.displayText(direction: .incoming, peer: "Sam"), "This message was deleted.")
        XCTAssertEqual(AlertPolicy.Kind(.unsent), .silent)
        XCTAssertNil(MessageContent.unsent.actionTarget)

        let head: [UInt8] = [3, 4] + target.bytes
        func counter(_ n: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: n >> (56 - 8 * UInt64($0))) } }
        let bad: [([UInt8], MessageContentError)] = [
            (head + counter(1), .empty(field: "text")),
            (head + counter(0) + Array("a".utf8), .empty(field: "counter")),
            (head + counter(1) + [0xff], .notUTF8(field: "text")),
            ([3, 4] + target.bytes.prefix(5), .truncated(field: "edited id")),
            ([3, 5] + target.bytes.prefix(5), .truncated(field: "deleted id")),
            ([3, 5] + target.bytes + [1], .trailingBytes(1)),
            ([5, 0], .trailingBytes(1)),
        ]
        for (bytes, cause) in bad {
            XCTAssertThrowsError(try MessageContent(decoding: bytes), "\(bytes.prefix(4))") { XCTAssertEqual($0 as? MessageContentError, cause, "\(bytes)") }
        }
        let longest = String(repeating: "a", count: EditPolicy.maximumTextBytes)
        XCTAssertEqual(MessageContent.control(.edit(target: target, text: longest, counter: 1)).encoded().count, MessageContent.maximumEncodedBytes)
    }

    /// A reaction: control kind 3, the message it is about, its counter, the emoji (none:
    /// taken back). Not one emoji, a counter of 0 or past 2^62: refused.
    func testAReactionNamesItsMessageItsCounterAndOneEmoji() throws {
        let target = MessageID(high: 7, low: 8)
        for emoji in ["👍", "❤️", "👨‍👩‍👧", nil] as [String?] {
            let content = MessageContent.control(.reaction(target: target, emoji: emoji, counter: 3))
            let bytes = content.encoded()
            XCTAssertEqual(Array(bytes.prefix(2)), [3, 3])
            XCTAssertEqual(Array(bytes[2..<18]), target.bytes)
            XCTAssertEqual(try MessageContent(decoding: bytes), content)
            XCTAssertEqual(content.actionTarget, target)
            XCTAssertEqual(content.refersTo, target)
            XCTAssertNil(content.quoted)
            XCTAssertEqual(AlertPolicy.Kind(content), .silent)
        }
        XCTAssertEqual(MessageContent.control(.reaction(target: target, emoji: "👍", counter: 1)).displayText(direction: .incoming, peer: "Sam"),
                       "Sam reacted 👍.")
        XCTAssertEqual("\(MessageContent.control(.reaction(target: target, emoji: "👍", counter: 1)))", "reaction")
        let head: [UInt8] = [3, 3] + target.bytes
        func counter(_ n: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: n >> (56 - 8 * UInt64($0))) } }
        XCTAssertThrowsError(try MessageContent(decoding: head + counter(1) + Array("ab".utf8))) {
            XCTAssertEqual($0 as? MessageContentError, .notAnEmoji)
        }
        XCTAssertThrowsError(try MessageContent(decoding: head + counter(1) + Array("👍👍".utf8))) {
            XCTAssertEqual($0 as? MessageContentError, .notAnEmoji)
        }
        XCTAssertThrowsError(try MessageContent(decoding: head + counter(0) + Array("👍".utf8))) {
            XCTAssertEqual($0 as? MessageContentError, .empty(field: "counter"))
        }
        XCTAssertThrowsError(try MessageContent(decoding: head + counter(TimerPolicy.maximumCounter + 1)))
        XCTAssertThrowsError(try MessageContent(decoding: Array(head.prefix(10)))) {
            XCTAssertEqual($0 as? MessageContentError, .truncated(field: "reacted-to id"))
        }
        XCTAssertThrowsError(try MessageContent(decoding: head + [0, 0])) { XCTAssertEqual($0 as? MessageContentError, .truncated(field: "counter")) }
        XCTAssertNil(MessageContent.text("x").actionTarget)
    }

    func testMessageItemsCarryContentAndShowText() {
        let text = MessageItem(id: MessageID(high: 1, low: 1), direction: .incoming, text: "hello", status: nil, resent: false, at: 1)
        XCTAssertEqual(text.content, .text("hello"))
        XCTAssertFalse(text.showsAsRow)
        let item = MessageItem(id: MessageID(high: 1, low: 2), direction: .incoming, content: .attachment(photo), status: nil, resent: false, at: 1)
        XCTAssertFalse(item.showsAsRow, "a file is a message, with its line")
        let timer = MessageItem(id: MessageID(high: 1, low: 3), direction: .incoming, content: .control(.timerChanged(.off)), status: nil,
                                resent: false, at: 1)
        XCTAssertTrue(timer.showsAsRow)
        XCTAssertEqual(item.text, MessageContent.attachment(photo).displayText(direction: .incoming))
    }

    func testAlertsSayWhatKindOfItemArrived() {
        XCTAssertEqual(AlertPolicy.Kind(.text("hi")), .text("hi"))
        XCTAssertEqual(AlertPolicy.Kind(.attachment(photo)), .photo)
        var voice = photo
        voice.kind = .voice
        XCTAssertEqual(AlertPolicy.Kind(.attachment(voice)), .voiceMessage)
        voice.kind = .file
        XCTAssertEqual(AlertPolicy.Kind(.attachment(voice)), .file)
        XCTAssertEqual(AlertPolicy.Kind(.control(.timerChanged(.oneDay))), .silent)
    }
}
