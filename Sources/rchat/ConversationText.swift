import Foundation
import RChatCore

/// How `rchat list` prints a conversation: JSON lines (README, "Using rChat from the command line") or one line per item.
enum ConversationText {
    static func json(_ item: ConversationItem) -> String {
        switch item {
        case .message(let m):
            var fields: [(String, JSONLine.Value)] = [
                ("type", .string("message")), ("id", .string(m.id.hex)), ("direction", .string(m.direction.rawValue)),
                ("text", .string(m.text)), ("status", .optionalString(m.status?.rawValue)), ("resent", .bool(m.resent)),
                ("at", .int(m.at)), ("expires_at", m.expiresAt.map(JSONLine.Value.int) ?? .null),
            ]
            if case .attachment(let a) = m.content {
                let transfer = m.transfer ?? .moving(done: 0)
                var path: String?
                if case .complete(let p) = transfer { path = p }
                var attachment: [(String, JSONLine.Value)] = [
                    ("kind", .string(a.kind.word)), ("name", .string(a.name)), ("size", .int(Int64(a.size))),
                    ("received", .int(Int64(transfer.done(of: a.size)))), ("path", .optionalString(path)),
                ]
                if case .discarded(let reason) = transfer { attachment.append(("discarded", .string(reason))) }
                if case .moving(_, let waiting?) = transfer { attachment.append(("waiting", .string(waiting.rawValue))) }
                fields.append(("attachment", .object(attachment)))
            }
            if let target = m.content.quoted { fields.append(("reply_to", .string(target.hex))) }
            if !m.reactions.isEmpty {
                fields.append(("reactions", .objects(m.reactions.map { r in
                    [("from", .string(r.from)), ("emoji", .string(r.emoji))] + (r.status.map { [("status", .string($0.rawValue))] } ?? [])
                })))
            }
            if m.isEdited {
                fields.append(("edited", .bool(true)))
                fields.append(("versions", .objects(m.versions.map { [("text", .string($0.text)), ("at", .int($0.at))] })))
            }
            // Deleted for everyone: no text at all (the view and `list` say "This message was deleted.").
            if m.isUnsent {
                fields.removeAll { $0.0 == "text" }
                fields.append(("deleted", .bool(true)))
            }
            if let pending = m.pendingAction { fields.append(("pending", .string(pending.words))) }
            if let waiting = m.waitingText { fields.append(("waiting", .string(waiting))) }
            if let author = m.author { fields.append(("from", .string(author))) }
            if let deliveries = m.deliveries {
                fields.append(("deliveries", .objects(deliveries.map { [("member", .string($0.member)), ("status", .string($0.status.rawValue))] })))
            }
            return JSONLine.object(fields)
        case .row(let r):
            return JSONLine.object([
                ("type", .string("row")), ("text", .string(r.text)), ("action", .optionalString(r.action?.rawValue)),
                ("ids", .strings(r.messageIDs.map(\.hex))),
            ])
        }
    }

    /// A time as the command line shows it: local, to the minute.
    static func localTime(_ at: Int64) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(at)))
    }

    /// How far a file has come, when it is not whole here: "45% taken by the relay" while
    /// it is sent (with what it waits for, if it does: "…, waiting for room at the relay"),
    /// "45% here" while it arrives, or why it was discarded.
    static func transfer(_ transfer: AttachmentTransfer?, size: UInt64, direction: Direction, peer: String) -> String {
        switch transfer {
        case .moving(let done, let waiting)?:
            let percent = size == 0 ? 0 : Int(done * 100 / size)
            guard direction == .outgoing else { return "  (\(percent)% here)" }
            let why = waiting.map { ", " + $0.words(contact: TerminalText.sanitized(peer, breaks: .shown)) } ?? ""
            return "  (\(percent)% taken by the relay\(why))"
        case .discarded(let reason)?:
            return "  (discarded: \(TerminalText.sanitized(reason, breaks: .shown)))"
        case .complete?, nil:
            return ""
        }
    }

    /// The start of a quote: at most 60 characters, "…" where it was cut.
    static func cut(_ text: String, to length: Int = 60) -> String {
        text.count <= length ? text : String(text.prefix(length - 1)) + "…"
    }

    static func line(_ item: ConversationItem) -> String {
        switch item {
        case .message(let m) where m.showsAsRow:
            // What this version cannot show reads as a row: one line saying so.
            return "  — \(TerminalText.sanitized(m.text, breaks: .shown))  \(m.id.hex)"
        case .message(let m):
            let when = localTime(m.at)
            let arrow = m.direction == .outgoing ? ">" : "<"
            var status = m.status.map { "  [\($0.rawValue)]" } ?? ""
            if m.resent { status += " Resent" }
            // An edit or a delete of this side's on its way: "(edit Sending)".
            if let pending = m.pendingAction { status += "  (\(pending.words))" }
            if let waiting = m.waitingText { status += "  (\(TerminalText.sanitized(waiting, breaks: .shown)))" }
            if case .attachment(let a) = m.content { status += Self.transfer(m.transfer, size: a.size, direction: m.direction, peer: m.peerName ?? "them") }
            // A message of several lines goes on several, each indented under the first.
            let head = "\(when) \(arrow) "
            // A file's line is its kind, name and size: one line, whatever the name holds.
            let text = TerminalText.sanitized(m.text, breaks: m.content.isAttachment ? .shown : .kept)
                .replacingOccurrences(of: "\n", with: "\n" + String(repeating: " ", count: head.count))
                + (m.isEdited ? " (edited)" : "")
            // A reply's quote goes on the line above, under its head, cut to one line.
            let quote = m.quote.map { String(repeating: " ", count: head.count) + "> " + Self.cut(TerminalText.sanitized($0.words, breaks: .shown)) + "\n" } ?? ""
            // Its reactions under it: "👍 2  ❤️ 1".
            let reactions = m.reactions.isEmpty ? ""
                : "\n" + String(repeating: " ", count: head.count) + TerminalText.sanitized(m.reactionSummary, breaks: .shown)
            return "\(quote)\(head)\(text)\(status)  \(m.id.hex)\(reactions)"
        case .row(let r):
            return "  — \(TerminalText.sanitized(r.text, breaks: .shown))" + (r.action == .resend ? "  [Resend]" : "")
        }
    }
}
