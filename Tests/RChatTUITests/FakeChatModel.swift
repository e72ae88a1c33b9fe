import Foundation
import RChatCore
@testable import RChatTUI

/// A ChatModel in memory that records every request, so tests can check what the view
/// asked for (a page, not the history) and which intents it sent.
/// Conversations are kept by id, as the engine keeps them; tests build them by name
/// (`contact("Sam")`, `addMessage("Sam", …)`), and `id("Sam")` says which id a name has now.
final class FakeChatModel: ChatModel {
    var summaries: [ConversationSummary] = []
    var items: [ConversationID: [ConversationItem]] = [:]
    var timelines: [MessageID: [TimelineEntry]] = [:]
    var connectionState: ConnectionState = .online
    var code = "rchat-1-MYCODE"
    var events: [ChatEvent] = []
    var failNextSend: ChatModelError?
    var failNextRename: ChatModelError?
    /// Drafts as the store keeps them; a set error makes every read or write fail with it.
    var drafts: [ConversationID: Draft] = [:]
    var failDraftReads: ChatModelError?
    var failDraftWrites: ChatModelError?
    var draftWrites: [(conversation: ConversationID, draft: Draft?)] = []
    /// Already answered unless a test says otherwise, so opening a conversation goes
    /// straight to the composer.
    var alertPermissionAsked = true
    /// Mouse reporting off unless a test turns it on: its effect would be in every takeEffects().
    var settings = ViewSettings(mouse: false)

    // What the view did.
    var pageRequests: [(conversation: ConversationID, before: Int?, limit: Int)] = []
    var sent: [(conversation: ConversationID, content: MessageContent)] = []
    var resent: [(conversation: ConversationID, ids: [MessageID])] = []
    var shown: [(conversation: ConversationID, ids: [MessageID])] = []
    var added: [String] = []
    var renamed: [(ConversationID, String)] = []
    var muted: [(ConversationID, Bool)] = []
    var blocked: [(ConversationID, Bool)] = []
    var deleted: [ConversationID] = []
    var alertPermissionAnswers: [Bool] = []
    var reconnects = 0
    var searches: [(query: SearchQuery, conversation: ConversationID?)] = []
    var failNextSearch: ChatModelError?

    private var nextID: UInt8 = 0
    private var nextConversation: Int64 = 0
    var clock: Int64 = 1_700_000_000

    /// The conversation whose name is exactly `name` now.
    func id(_ name: String) -> ConversationID {
        guard let summary = summaries.first(where: { $0.name == name }) else { fatalError("no conversation named \(name)") }
        return summary.id
    }

    func conversations() -> [ConversationSummary] { summaries }

    func page(of conversation: ConversationID, before: Int?, limit: Int) -> [ConversationItem] {
        pageRequests.append((conversation, before, limit))
        let all = items[conversation] ?? []
        let end = all.count - (before ?? 0)
        let start = max(0, end - limit)
        return end > start ? Array(all[start..<end]) : []
    }

    func itemCount(of conversation: ConversationID) -> Int { items[conversation]?.count ?? 0 }
    func timeline(of conversation: ConversationID, message: MessageID) -> [TimelineEntry] { timelines[message] ?? [] }
    func connection() -> ConnectionState { connectionState }
    func viewSettings() -> ViewSettings { settings }
    var owedAlerts: [String] = []
    func takeOwedAlerts() -> [String] { defer { owedAlerts = [] }; return owedAlerts }
    var openRequest: ConversationID?
    func takeOpenRequest() -> ConversationID? { defer { openRequest = nil }; return openRequest }

    var lastOpenConversation: ConversationID?
    func rememberOpenConversation(_ conversation: ConversationID?) { lastOpenConversation = conversation }

    /// Messages whose text has every word at the start of one of its words (ignoring case),
    /// newest first across conversations (the engine's order: as stored), with their index.
    func search(_ query: SearchQuery, in conversation: ConversationID?) throws(ChatModelError) -> [SearchHit] {
        if let error = failNextSearch { failNextSearch = nil; throw error }
        searches.append((query, conversation))
        var hits: [SearchHit] = []
        for (id, list) in items where conversation == nil || conversation == id {
            for (index, item) in list.enumerated() {
                guard case .message(let m) = item, case .text(let text) = m.content else { continue }
                let textWords = text.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber })
                guard query.words.allSatisfy({ word in textWords.contains { $0.hasPrefix(word.lowercased()) } }) else { continue }
                hits.append(SearchHit(conversation: id, message: m.id, direction: m.direction, at: m.at, snippet: text, index: index))
            }
        }
        return Array(hits.sorted { ($0.at, $0.index) > ($1.at, $1.index) }.prefix(SearchQuery.resultLimit))
    }
    func myCode() -> String { code }
    func reconnect() { reconnects += 1 }

    func draft(of conversation: ConversationID) throws(ChatModelError) -> Draft? {
        if let error = failDraftReads { throw error }
        return drafts[conversation]
    }

    func setDraft(_ draft: Draft?, for conversation: ConversationID) throws(ChatModelError) {
        if let error = failDraftWrites { throw error }
        draftWrites.append((conversation, draft))
        drafts[conversation] = draft
    }

    func send(to conversation: ConversationID, content: MessageContent) throws(ChatModelError) {
        if let error = failNextSend { failNextSend = nil; throw error }
        sent.append((conversation, content))
        addMessage(conversation, .outgoing, content.displayText(direction: .outgoing), status: .sending)
    }

    func resend(in conversation: ConversationID, messages: [MessageID]) throws(ChatModelError) {
        resent.append((conversation, messages))
    }
    var acted: [(ConversationID, MessageAction)] = []
    func act(in conversation: ConversationID, _ action: MessageAction) throws(ChatModelError) {
        acted.append((conversation, action))
    }
    var filesSent: [(ConversationID, String, AttachmentKind?)] = []
    /// Each sent file's bytes as they were when sent (nil: there was no such file).
    var filesSentBytes: [Data] = []
    /// And their permissions.
    var filesSentModes: [Int] = []
    /// The ids `sendFile` returned.
    var filesSentIDs: [MessageID] = []
    @discardableResult
    func sendFile(to conversation: ConversationID, path: String, as kind: AttachmentKind?) throws(ChatModelError) -> MessageID {
        if let error = failNextSend { failNextSend = nil; throw error }
        let id = makeID()
        filesSentIDs.append(id)
        filesSent.append((conversation, path, kind))
        if let bytes = FileManager.default.contents(atPath: path) { filesSentBytes.append(bytes) }
        if let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int { filesSentModes.append(mode) }
        return id
    }
    var timersSet: [(ConversationID, DisappearingTimer)] = []
    var failNextTimer: ChatModelError?
    func setTimer(_ timer: DisappearingTimer, for conversation: ConversationID) throws(ChatModelError) {
        if let error = failNextTimer { failNextTimer = nil; throw error }
        timersSet.append((conversation, timer))
        guard let i = summaries.firstIndex(where: { $0.id == conversation }) else { return }
        summaries[i].timer = timer
    }
    var saved: [(ConversationID, MessageID, String)] = []
    var failNextSave: ChatModelError?
    func saveAttachment(in conversation: ConversationID, message: MessageID, to path: String) throws(ChatModelError) -> String {
        if let error = failNextSave { failNextSave = nil; throw error }
        saved.append((conversation, message, path))
        return path
    }
    func markShown(in conversation: ConversationID, messages: [MessageID]) { shown.append((conversation, messages)) }

    func addContact(code: String) throws(ChatModelError) -> ConversationID {
        guard code.hasPrefix("rchat-1-") else { throw ChatModelError("not an rChat contact code") }
        let name = String(code.dropFirst(8))
        added.append(name)
        return contact(name)
    }

    /// As the engine renames: the id, items and state stay; only the name changes.
    func rename(_ conversation: ConversationID, to name: String) throws(ChatModelError) {
        if let error = failNextRename { failNextRename = nil; throw error }
        renamed.append((conversation, name))
        setName(conversation, name)
    }

    /// Another process (`rchat rename`) renamed it: the store says so, no intent was sent.
    func setName(_ conversation: ConversationID, _ name: String) {
        guard let i = summaries.firstIndex(where: { $0.id == conversation }) else { return }
        summaries[i].name = name
    }

    func setMuted(_ conversation: ConversationID, _ on: Bool) throws(ChatModelError) { muted.append((conversation, on)) }
    /// A group's members as `/members` lists them, by conversation; the changes asked for.
    var groupMemberLines: [ConversationID: [GroupMemberLine]] = [:]
    var groupChanges: [(ConversationID, GroupChange)] = []
    func groupMembers(of conversation: ConversationID) throws(ChatModelError) -> [GroupMemberLine] {
        guard let lines = groupMemberLines[conversation] else { throw ChatModelError("/members lists a group's members") }
        return lines
    }
    func changeGroup(_ conversation: ConversationID, _ change: GroupChange) throws(ChatModelError) {
        guard groupMemberLines[conversation] != nil else { throw ChatModelError("that is done in a group") }
        groupChanges.append((conversation, change))
    }
    func setBlocked(_ conversation: ConversationID, _ on: Bool) throws(ChatModelError) { blocked.append((conversation, on)) }
    func delete(_ conversation: ConversationID) throws(ChatModelError) {
        deleted.append(conversation)
        drafts[conversation] = nil
        summaries.removeAll { $0.id == conversation }
        items[conversation] = nil
    }

    /// Message requests answered, as the engine answers them.
    var acceptedRequests: [(request: ConversationID, replacing: ConversationID?)] = []
    var declinedRequests: [ConversationID] = []
    var safetyNumbers: [ConversationID: String] = [:]

    func acceptRequest(_ request: ConversationID, replacing: ConversationID?) throws(ChatModelError) -> ConversationID {
        guard let i = summaries.firstIndex(where: { $0.id == request }), summaries[i].state == .request else {
            throw ChatModelError("That is not a message request.")
        }
        acceptedRequests.append((request, replacing))
        guard let replacing else {
            summaries[i].state = .ok
            summaries[i].namesake = nil
            return request
        }
        items[replacing, default: []] += items[request] ?? []
        summaries.remove(at: i)
        items[request] = nil
        return replacing
    }

    func declineRequest(_ request: ConversationID) throws(ChatModelError) {
        guard summaries.contains(where: { $0.id == request && $0.state == .request }) else {
            throw ChatModelError("That is not a message request.")
        }
        declinedRequests.append(request)
        summaries.removeAll { $0.id == request }
        items[request] = nil
    }

    func safetyNumber(of conversation: ConversationID) throws(ChatModelError) -> String {
        guard let number = safetyNumbers[conversation] else { throw ChatModelError("No safety number.") }
        return number
    }

    func setAlertPermission(_ allowed: Bool) {
        alertPermissionAnswers.append(allowed)
        alertPermissionAsked = true
    }

    /// What the view asked to alert on the desktop, burst by burst.
    var desktopAlerts: [(arrivals: [MessageID], onScreen: ConversationID?)] = []
    func alertOnDesktop(_ arrivals: [(conversation: ConversationID, id: MessageID)], onScreen: ConversationID?) {
        desktopAlerts.append((arrivals.map(\.id), onScreen))
    }

    var wakeDescriptor: Int32 { -1 }
    func drainEvents() -> [ChatEvent] { defer { events = [] }; return events }

    // MARK: Building conversations

    /// A new conversation (a new id, even when another has a name equal to this one
    /// ignoring case or width).
    @discardableResult
    func contact(_ name: String, state: ConversationSummary.State = .ok, unread: Int = 0) -> ConversationID {
        nextConversation += 1
        let id = ConversationID(nextConversation)
        summaries.append(ConversationSummary(id: id, name: name, state: state, unread: unread, lastActivity: clock))
        items[id] = []
        return id
    }

    func makeID() -> MessageID {
        nextID &+= 1
        return MessageID(bytes: [UInt8](repeating: 0, count: 15) + [nextID])!
    }

    @discardableResult
    func addMessage(_ contact: String, _ direction: Direction, _ text: String, status: MessageStatus? = nil,
                    resent: Bool = false) -> MessageID {
        addMessage(id(contact), direction, text, status: status, resent: resent)
    }

    @discardableResult
    func addMessage(_ conversation: ConversationID, _ direction: Direction, _ text: String, status: MessageStatus? = nil,
                    resent: Bool = false) -> MessageID {
        let id = makeID()
        clock += 60
        items[conversation, default: []].append(.message(MessageItem(
            id: id, direction: direction, text: text,
            status: direction == .outgoing ? (status ?? .sent) : nil, resent: resent, at: clock)))
        return id
    }

    func addRow(_ contact: String, _ text: String, resending ids: [MessageID]) {
        clock += 60
        items[id(contact), default: []].append(.row(SystemRow(id: Int64(clock), text: text, action: ids.isEmpty ? nil : .resend,
                                                           messageIDs: ids, at: clock)))
    }

    /// What the store does once a row's messages were resent or delivered.
    func withdrawResend(_ contact: String, row text: String) {
        let conversation = self.id(contact)
        guard var list = items[conversation] else { return }
        for i in list.indices {
            if case .row(var r) = list[i], r.text == text { r.action = nil; list[i] = .row(r) }
        }
        items[conversation] = list
    }

    func setStatus(_ contact: String, _ id: MessageID, _ status: MessageStatus) {
        change(contact, id) { $0.status = status }
    }

    /// Changes a stored message in place, as the store would.
    func change(_ contact: String, _ id: MessageID, _ body: (inout MessageItem) -> Void) {
        let conversation = self.id(contact)
        guard var list = items[conversation] else { return }
        for i in list.indices {
            if case .message(var m) = list[i], m.id == id { body(&m); list[i] = .message(m) }
        }
        items[conversation] = list
    }

    /// An attachment message: a file of `size` bytes named `name`, where `transfer` says.
    @discardableResult
    func addAttachment(_ contact: String, _ direction: Direction, _ kind: AttachmentKind, name: String, size: UInt64,
                       transfer: AttachmentTransfer?, status: MessageStatus? = nil) -> MessageID {
        let id = makeID()
        clock += 60
        let attachment = Attachment(kind: kind, name: name, size: size, contentHash: [UInt8](repeating: 1, count: 32),
                                    key: [UInt8](repeating: 2, count: 32))
        items[self.id(contact), default: []].append(.message(MessageItem(
            id: id, direction: direction, content: .attachment(attachment),
            status: direction == .outgoing ? (status ?? .sending) : nil, resent: false, at: clock, transfer: transfer)))
        return id
    }

    /// How far an attachment's file has moved, as the engine would report it now.
    func setTransfer(_ contact: String, _ id: MessageID, _ transfer: AttachmentTransfer) {
        change(contact, id) { $0.transfer = transfer }
    }

    /// The ids of the messages at `indexes` of the conversation, oldest first.
    func messageIDs(_ contact: String, _ indexes: some Sequence<Int>) -> [MessageID] {
        let list = items[id(contact)] ?? []
        return indexes.compactMap { list[$0].message?.id }
    }

    /// As the engine deletes messages whose timer ran out: gone from the store (pages and
    /// counts no longer have them), then the event says which.
    func expire(_ contact: String, _ ids: [MessageID]) {
        let conversation = id(contact)
        let gone = Set(ids)
        items[conversation]?.removeAll { $0.message.map { gone.contains($0.id) } ?? false }
        events.append(.itemsRemoved(conversation: conversation, ids: ids))
    }

    /// A long conversation built cheaply: n short messages alternating direction.
    func fill(_ contact: String, count: Int) {
        var list = items[id(contact)] ?? []
        list.reserveCapacity(list.count + count)
        for n in 0..<count {
            let bytes = withUnsafeBytes(of: UInt64(n).bigEndian, Array.init)
            let id = MessageID(bytes: [UInt8](repeating: 7, count: 8) + bytes)!
            let direction: Direction = n % 2 == 0 ? .incoming : .outgoing
            list.append(.message(MessageItem(id: id, direction: direction, text: "message \(n)",
                                             status: direction == .outgoing ? .read : nil, resent: false,
                                             at: clock + Int64(n))))
        }
        items[id(contact)] = list
    }
}
