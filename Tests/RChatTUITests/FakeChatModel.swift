import RChatCore
@testable import RChatTUI

/// A ChatModel in memory that records every request, so tests can check what the view
/// asked for (a page, not the history) and which intents it sent.
final class FakeChatModel: ChatModel {
    var summaries: [ConversationSummary] = []
    var items: [String: [ConversationItem]] = [:]
    var timelines: [MessageID: [TimelineEntry]] = [:]
    var connectionState: ConnectionState = .online
    var code = "rchat-1-MYCODE"
    var events: [ChatEvent] = []
    var failNextSend: ChatModelError?
    /// Already answered unless a test says otherwise, so opening a conversation goes
    /// straight to the composer.
    var alertPermissionAsked = true

    // What the view did.
    var pageRequests: [(contact: String, before: Int?, limit: Int)] = []
    var sent: [(contact: String, content: MessageContent)] = []
    var resent: [(contact: String, ids: [MessageID])] = []
    var shown: [(contact: String, ids: [MessageID])] = []
    var added: [String] = []
    var muted: [(String, Bool)] = []
    var blocked: [(String, Bool)] = []
    var deleted: [String] = []
    var alertPermissionAnswers: [Bool] = []

    private var nextID: UInt8 = 0
    var clock: Int64 = 1_700_000_000

    func conversations() -> [ConversationSummary] { summaries }

    func page(of contact: String, before: Int?, limit: Int) -> [ConversationItem] {
        pageRequests.append((contact, before, limit))
        let all = items[contact] ?? []
        let end = all.count - (before ?? 0)
        let start = max(0, end - limit)
        return end > start ? Array(all[start..<end]) : []
    }

    func itemCount(of contact: String) -> Int { items[contact]?.count ?? 0 }
    func timeline(of contact: String, message: MessageID) -> [TimelineEntry] { timelines[message] ?? [] }
    func connection() -> ConnectionState { connectionState }
    func myCode() -> String { code }

    func send(to contact: String, content: MessageContent) throws(ChatModelError) {
        if let error = failNextSend { failNextSend = nil; throw error }
        sent.append((contact, content))
        addMessage(contact, .outgoing, content.displayText(direction: .outgoing), status: .sending)
    }

    func resend(to contact: String, messages: [MessageID]) throws(ChatModelError) { resent.append((contact, messages)) }
    func markShown(contact: String, messages: [MessageID]) { shown.append((contact, messages)) }

    func addContact(code: String) throws(ChatModelError) -> String {
        guard code.hasPrefix("rchat-1-") else { throw ChatModelError("not an rChat contact code") }
        let name = String(code.dropFirst(8))
        added.append(name)
        summaries.append(ConversationSummary(name: name, state: .ok, unread: 0, lastActivity: clock))
        return name
    }

    func setMuted(_ contact: String, _ on: Bool) throws(ChatModelError) { muted.append((contact, on)) }
    func setBlocked(_ contact: String, _ on: Bool) throws(ChatModelError) { blocked.append((contact, on)) }
    func delete(_ contact: String) throws(ChatModelError) {
        deleted.append(contact)
        summaries.removeAll { $0.name == contact }
        items[contact] = nil
    }

    func setAlertPermission(_ allowed: Bool) {
        alertPermissionAnswers.append(allowed)
        alertPermissionAsked = true
    }

    var wakeDescriptor: Int32 { -1 }
    func drainEvents() -> [ChatEvent] { defer { events = [] }; return events }

    // MARK: Building conversations

    func contact(_ name: String, state: ConversationSummary.State = .ok, unread: Int = 0) {
        summaries.append(ConversationSummary(name: name, state: state, unread: unread, lastActivity: clock))
        if items[name] == nil { items[name] = [] }
    }

    func makeID() -> MessageID {
        nextID &+= 1
        return MessageID(bytes: [UInt8](repeating: 0, count: 15) + [nextID])!
    }

    @discardableResult
    func addMessage(_ contact: String, _ direction: Direction, _ text: String, status: MessageStatus? = nil,
                    resent: Bool = false) -> MessageID {
        let id = makeID()
        clock += 60
        items[contact, default: []].append(.message(MessageItem(
            id: id, direction: direction, text: text,
            status: direction == .outgoing ? (status ?? .sent) : nil, resent: resent, at: clock)))
        return id
    }

    func addRow(_ contact: String, _ text: String, resending ids: [MessageID]) {
        clock += 60
        items[contact, default: []].append(.row(SystemRow(id: Int64(clock), text: text, action: ids.isEmpty ? nil : .resend,
                                                           messageIDs: ids, at: clock)))
    }

    func setStatus(_ contact: String, _ id: MessageID, _ status: MessageStatus) {
        guard var list = items[contact] else { return }
        for i in list.indices {
            if case .message(var m) = list[i], m.id == id { m.status = status; list[i] = .message(m) }
        }
        items[contact] = list
    }

    /// A long conversation built cheaply: n short messages alternating direction.
    func fill(_ contact: String, count: Int) {
        var list = items[contact] ?? []
        list.reserveCapacity(list.count + count)
        for n in 0..<count {
            let bytes = withUnsafeBytes(of: UInt64(n).bigEndian, Array.init)
            let id = MessageID(bytes: [UInt8](repeating: 7, count: 8) + bytes)!
            let direction: Direction = n % 2 == 0 ? .incoming : .outgoing
            list.append(.message(MessageItem(id: id, direction: direction, text: "message \(n)",
                                             status: direction == .outgoing ? .read : nil, resent: false,
                                             at: clock + Int64(n))))
        }
        items[contact] = list
    }
}
