import RChatCore
import RChatCrypto

/// A contact code as pasted: whatever parses prints as a code that parses to the same.
enum ContactCodeTarget: FuzzTarget {
    static let name = "contact-code"

    static func run(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        guard let code = try? ContactCode(parsing: text) else { return }
        precondition((try? ContactCode(parsing: code.text)) == code, "a contact code does not parse back to itself")
        _ = try? code.verify()
    }

    static func seeds() -> [[UInt8]] {
        let code = Fixtures.code("Alice", Fixtures.alice, Fixtures.aliceDevice).text
        // As mail breaks a long line.
        let broken = code.enumerated().map { $0.offset > 0 && $0.offset % 60 == 0 ? "\n\($0.element)" : "\($0.element)" }.joined()
        return [Array(code.utf8), Array(broken.utf8), Array(Fixtures.code("Bob 漢", Fixtures.bob, Fixtures.bobDevice).text.utf8)]
    }
}

/// A message's content after its envelope opened: what decodes encodes to bytes that decode
/// to the same content, and its text is drawn and sanitized for the terminal.
enum MessageContentTarget: FuzzTarget {
    static let name = "message-content"

    static func run(_ input: [UInt8]) {
        guard let content = try? MessageContent(decoding: input) else { return }
        precondition((try? MessageContent(decoding: content.encoded())) == content, "message content does not decode to itself")
        _ = content.description
        // The text as the view and the command lines draw it.
        if case .text(let text) = content {
            _ = TextWidth.drawn(text)
            precondition(TerminalText.isSafe(TerminalText.sanitized(text, breaks: .kept), breaks: .kept), "sanitized text is not safe")
        }
    }

    static func seeds() -> [[UInt8]] {
        let contents: [MessageContent] = [
            .text("hello"),
            .text("line one\nline two, 漢字 and 👍"),
            .attachment(Attachment(kind: .photo, name: "cat.jpg", size: 12_345, contentHash: [UInt8](repeating: 1, count: 32),
                                   key: [UInt8](repeating: 2, count: 32))),
            .attachment(Attachment(kind: .file, name: "notes.txt", size: 3, contentHash: [UInt8](repeating: 3, count: 32),
                                   key: [UInt8](repeating: 4, count: 32))),
            .control(.timerChanged(.oneDay, counter: 1)),
            .control(.timerChanged(.off, counter: 0)),
        ]
        return contents.map { $0.encoded() }
    }
}
