/// What an alert says, and whether there is one at all (README, "Alerts and the
/// background check"). Pure: the engine gathers what arrived, this decides.
public enum AlertPolicy {
    /// Settings → Notifications → Show in alerts.
    public enum Content: String, Sendable, CaseIterable {
        case name, nothing, message
    }

    public enum Kind: Sendable, Equatable {
        case text(String)
        case photo, voiceMessage, file
        /// A reaction to this side's own message (others' reactions never alert; the
        /// engine says which do, and `alert-reactions off` silences them).
        case reaction(String)
        /// From someone who is not a contact: never a name, never the text.
        case request
        /// Receipts, cover or steady packets, session notices, session setup.
        case silent

        /// What a message with this content alerts as: a control item (a timer change)
        /// only adds a row to its conversation; what needs a newer rChat alerts as a message.
        public init(_ content: MessageContent) {
            switch content {
            case .text(let text): self = .text(text)
            case .reply(let reply): self = .text(reply.text)
            case .attachment(let a):
                switch a.kind {
                case .photo: self = .photo
                case .voice: self = .voiceMessage
                case .file: self = .file
                }
            case .control, .unsent: self = .silent
            // Someone wrote something a later version shows: it alerts as a message whose
            // text is the line the conversation shows for it.
            case .newer: self = .text(MessageContent.newerText)
            }
        }
    }

    public struct Arrival: Sendable, Equatable {
        public var contactName: String
        /// The conversation it arrived in: what clicking its alert opens.
        public var conversation: ConversationID?
        public var kind: Kind
        public var contactMuted: Bool
        /// Blocked, deleted or unknown senders produce no alert.
        public var contactBlockedOrDeleted: Bool
        /// Already alerted (by an earlier check, the view, the linger after quitting).
        public var alreadyAlerted: Bool
        /// The view shows this conversation right now.
        public var onScreen: Bool
        /// The group's name, for a group's message (`contactName` is then its author's):
        /// the alert is titled with the group, its text says who wrote it. Muted and
        /// blocked are then the group's.
        public var group: String?

        public init(contactName: String, conversation: ConversationID? = nil, kind: Kind, contactMuted: Bool = false,
                    contactBlockedOrDeleted: Bool = false, alreadyAlerted: Bool = false, onScreen: Bool = false, group: String? = nil) {
            self.contactName = contactName
            self.conversation = conversation
            self.kind = kind
            self.contactMuted = contactMuted
            self.contactBlockedOrDeleted = contactBlockedOrDeleted
            self.alreadyAlerted = alreadyAlerted
            self.onScreen = onScreen
            self.group = group
        }
    }

    public struct Alert: Sendable, Equatable {
        public var title: String
        public var text: String
        /// Whose it is, for grouping (a group's name for a group's messages); nil for a
        /// summary, a request, or with `nothing` shown.
        public var contact: String?
        /// The conversation clicking it opens; nil for a summary. The only thing an alert's
        /// action carries: never content.
        public var conversation: ConversationID?

        public init(title: String, text: String, contact: String?, conversation: ConversationID? = nil) {
            self.title = title
            self.text = text
            self.contact = contact
            self.conversation = conversation
        }

        /// The alert on one line, as a banner or a terminal shows it: "Sam: New message".
        public var line: String { "\(title): \(text)" }

        /// A message request's alert (which never names its sender).
        var isRequest: Bool { contact == nil && text == AlertPolicy.requestText }
    }

    /// "After 5 alerts in one check, rChat shows one summary such as '8 new messages'."
    public static let summaryThreshold = 5
    public static let previewCharacters = 100
    static let requestText = "New message request"

    /// Whether this arrival alerts at all.
    public static func alerts(_ a: Arrival) -> Bool {
        if case .silent = a.kind { return false }
        if a.alreadyAlerted || a.onScreen { return false }
        if case .request = a.kind { return true }
        return !a.contactMuted && !a.contactBlockedOrDeleted
    }

    /// The alert for one arrival, if any.
    public static func alert(for a: Arrival, content: Content) -> Alert? {
        guard alerts(a) else { return nil }
        switch a.kind {
        case .request:
            return Alert(title: "rChat", text: requestText, contact: nil, conversation: a.conversation)
        case .silent:
            return nil
        case .photo, .voiceMessage, .file, .text, .reaction:
            let sender = TerminalText.sanitized(a.contactName, breaks: .shown)
            let title = content == .nothing ? "rChat" : a.group.map { TerminalText.sanitized($0, breaks: .shown) } ?? sender
            var text: String
            // A file says what it is in every mode, never its name.
            switch (content, a.kind) {
            case (.message, .text(let body)): text = preview(body)
            // "Reacted 👍" where the message would be shown, else "New reaction".
            case (.message, .reaction(let emoji)): text = "Reacted " + TerminalText.sanitized(emoji, breaks: .shown)
            case (_, .reaction): text = "New reaction"
            case (_, .photo): text = "Photo"
            case (_, .voiceMessage): text = "Voice message"
            case (_, .file): text = "File"
            default: text = "New message"
            }
            // In a group the title is the group's, so the text says who wrote it ("Alice: New
            // message"); with `nothing` shown, no name at all.
            if a.group != nil && content != .nothing { text = "\(sender): \(text)" }
            return Alert(title: title, text: text, contact: content == .nothing ? nil : a.group ?? a.contactName, conversation: a.conversation)
        }
    }

    /// The alerts for everything one check (or one burst in the view) collected: grouped by
    /// contact in arrival order, or a single summary when there are more than five.
    public static func alerts(for arrivals: [Arrival], content: Content) -> [Alert] {
        let each = arrivals.compactMap { alert(for: $0, content: content) }
        if each.count > summaryThreshold {
            return [Alert(title: "rChat", text: "\(each.count) new messages", contact: nil)]
        }
        return groups(each).flatMap { $0 }
    }

    /// The alerts grouped by contact, in the order in which each contact first appeared: a
    /// contact's, the requests', and (with `nothing` shown) the nameless messages' apart.
    static func groups(_ alerts: [Alert]) -> [[Alert]] {
        var order: [String] = []
        var groups: [String: [Alert]] = [:]
        for alert in alerts {
            // A group's by the group (apart from a contact of its name); a contact's by name.
            let key = alert.conversation.flatMap { $0.isGroup && alert.contact != nil ? "\u{1}\($0.rawValue)" : nil }
                ?? alert.contact ?? (alert.isRequest ? "\u{0}request" : "\u{0}\(alert.title)")
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(alert)
        }
        return order.map { groups[$0]! }
    }

    /// What the view's banner shows for everything that arrived while it is up: one alert per
    /// contact, counted ("Sam: 3 new messages", never the same line three times), grouped and
    /// summarised as `alerts(for:content:)` groups and summarises.
    public static func counted(_ arrivals: [Arrival], content: Content) -> [Alert] {
        let each = arrivals.compactMap { alert(for: $0, content: content) }
        if each.count > summaryThreshold {
            return [Alert(title: "rChat", text: "\(each.count) new messages", contact: nil)]
        }
        return groups(each).map { group in
            guard group.count > 1 else { return group[0] }
            let first = group[0]
            let text = first.isRequest ? "\(group.count) new message requests" : "\(group.count) new messages"
            let conversation = group.allSatisfy { $0.conversation == first.conversation } ? first.conversation : nil
            return Alert(title: first.title, text: text, contact: first.contact, conversation: conversation)
        }
    }

    /// An alert's text as a desktop notification's body: notification services read the
    /// body as markup (`<b>`, `<a href>`, `<img>`), so `&`, `<` and `>` are written as
    /// entities and a message cannot add a link or an image. The title is never markup.
    public static func desktopBody(_ text: String) -> String {
        var out = ""
        for ch in text {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(ch)
            }
        }
        return out
    }

    /// The first 100 characters on one line: line breaks and other white space become one
    /// space, and what a terminal could act on shows as `TerminalText`'s stand-in.
    public static func preview(_ text: String) -> String {
        var out = ""
        var count = 0
        var lastWasSpace = false
        for ch in text {
            if count == previewCharacters { break }
            if ch.isWhitespace {
                if !lastWasSpace && !out.isEmpty { out.append(" "); count += 1; lastWasSpace = true }
                continue
            }
            out += TerminalText.sanitized(String(ch), breaks: .shown)
            count += 1
            lastWasSpace = false
        }
        while out.last == " " { out.removeLast() }
        return out
    }
}
