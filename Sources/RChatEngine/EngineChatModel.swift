import Foundation
import RChatCore
import RChatStore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The engine as the full-screen view sees it (Core's `ChatModel`): reads and intents go
/// through an `AccountService` opened for the UI thread — its own SQLite connection, read
/// beside the engine's thanks to WAL — and the running engine (on its own thread, with its
/// own connection) is woken after each write. The engine's events arrive on its thread;
/// they are queued here and an eventfd becomes readable, which the view's poll() waits on.
public final class EngineChatModel: ChatModel {
    public let account: AccountService
    private let wakeEngine: @Sendable () -> Void
    private let reconnectEngine: @Sendable () -> Void
    private let events: ChatEventQueue
    /// Where desktop alerts go (`AlertSink.desktop`); nil where there is no desktop: the view
    /// then never offers them.
    public var desktop: AlertSink?

    /// `engine`: the running engine whose events this model shows (nil: none, e.g. a
    /// benchmark or a view over a store nobody syncs). Its `onEvent` is taken over.
    public convenience init(account: AccountService, engine: Engine?) throws(EngineError) {
        try self.init(account: account, wake: { [weak engine] in engine?.wake() },
                      reconnect: { [weak engine] in engine?.reconnect() })
        if let engine {
            let events = self.events
            engine.onEvent = { event in events.post(event) }
        }
    }

    /// A model whose engine is reached by `wake` (and `reconnect` for `/reconnect`; without
    /// it, `/reconnect` only wakes the engine); events come through `post`.
    public init(account: AccountService, wake: @escaping @Sendable () -> Void,
                reconnect: (@Sendable () -> Void)? = nil) throws(EngineError) {
        self.account = account
        self.wakeEngine = wake
        self.reconnectEngine = reconnect ?? wake
        events = try ChatEventQueue()
    }

    /// For engine events from any thread (the engine's `onEvent` calls this).
    public var eventSink: @Sendable (ChatEvent) -> Void {
        let events = self.events
        return { events.post($0) }
    }

    // MARK: reading

    public func conversations() -> [ConversationSummary] {
        (try? account.conversationSummaries()) ?? []
    }

    /// `before`: how many of the newest items to skip (nil: none).
    public func page(of conversation: ConversationID, before: Int?, limit: Int) -> [ConversationItem] {
        if let group = try? account.store.group(conversation) {
            return (try? account.conversation(group, limit: limit, skippingLatest: before ?? 0)) ?? []
        }
        guard let contact = try? account.contact(conversation) else { return [] }
        return (try? account.conversation(contact, limit: limit, skippingLatest: before ?? 0)) ?? []
    }

    public func itemCount(of conversation: ConversationID) -> Int {
        guard (try? account.store.group(conversation)) ?? nil != nil || (try? account.contact(conversation)) != nil else { return 0 }
        return (try? account.store.conversationLength(conversation: conversation)) ?? 0
    }

    public func timeline(of conversation: ConversationID, message: MessageID) -> [TimelineEntry] {
        (try? account.timeline(conversation, id: message)) ?? []
    }

    public func search(_ query: SearchQuery, in conversation: ConversationID?) throws(ChatModelError) -> [SearchHit] {
        try wrap { () throws(EngineError) in try account.search(query, in: conversation) }
    }

    public func connection() -> ConnectionState { events.connection }

    public func myCode() -> String {
        (try? account.contactCode().text) ?? "(your code cannot be read: see rchat code)"
    }

    // MARK: intents

    public func send(to conversation: ConversationID, content: MessageContent) throws(ChatModelError) {
        try wrap { () throws(EngineError) in
            switch try account.target(conversation) {
            case .group(let group):
                _ = try account.send(toGroup: group, content: content)
            case .contact(let contact):
                _ = try account.send(to: contact, content: content)
            }
        }
        wakeEngine()
    }

    public func resend(in conversation: ConversationID, messages: [MessageID]) throws(ChatModelError) {
        let resent = try wrap { () throws(EngineError) in
            try account.resendShown(account.target(conversation), ids: messages)
        }.resent
        wakeEngine()
        // The view's copy of these rows still shows the old status: the store says Sending now.
        for id in resent { events.post(.statusChanged(conversation: conversation, id: id, status: .sending)) }
    }

    public func act(in conversation: ConversationID, _ action: MessageAction) throws(ChatModelError) {
        try wrap { () throws(EngineError) in
            let target = try account.target(conversation)
            switch action {
            case .react(let id, let emoji): _ = try account.react(in: target, to: id, emoji: emoji)
            case .edit(let id, let text): _ = try account.edit(in: target, id: id, text: text)
            case .unsend(let id): _ = try account.unsend(in: target, id: id)
            }
        }
        wakeEngine()
        // The message shows it at once: the view reads it again.
        events.post(.rowAdded(conversation: conversation))
    }

    @discardableResult
    public func sendFile(to conversation: ConversationID, path: String, as kind: AttachmentKind?) throws(ChatModelError) -> MessageID {
        let id = try wrap { () throws(EngineError) in
            switch try account.target(conversation) {
            case .group(let group): try account.sendFile(toGroup: group, path: path, as: kind)
            case .contact(let contact): try account.sendFile(to: contact, path: path, as: kind)
            }
        }
        wakeEngine()
        return id
    }

    public func saveAttachment(in conversation: ConversationID, message: MessageID, to path: String) throws(ChatModelError) -> String {
        try wrap { () throws(EngineError) in try account.saveAttachment(account.target(conversation), id: message, to: path) }
    }

    public func setTimer(_ timer: DisappearingTimer, for conversation: ConversationID) throws(ChatModelError) {
        try wrap { () throws(EngineError) in
            switch try account.target(conversation) {
            case .group(let group): try account.setTimer(timer, for: group)
            case .contact(let contact): _ = try account.setTimer(timer, for: contact)
            }
        }
        wakeEngine()
    }

    public func markShown(in conversation: ConversationID, messages: [MessageID]) {
        guard let marked = try? account.markShown(conversation, ids: messages), !marked.isEmpty else { return }
        wakeEngine()
        events.post(.conversationsChanged)   // the unread count went down
    }

    public func addContact(code: String) throws(ChatModelError) -> ConversationID {
        let parsed: ContactCode
        do { parsed = try ContactCode(parsing: code) } catch {
            throw ChatModelError("That is not a contact code: \(error)")
        }
        let result = try wrap { () throws(EngineError) in try account.addContact(parsed, name: nil) }
        wakeEngine()
        // Their device is verified: the row that asked for it went.
        if result.change == .reverified { events.post(.rowAdded(conversation: result.conversation)) }
        return result.conversation
    }

    public func rename(_ conversation: ConversationID, to name: String) throws(ChatModelError) {
        try wrap { () throws(EngineError) in
            switch try account.target(conversation) {
            case .group(let group): try account.renameGroup(group, to: name)
            case .contact: try account.rename(conversation, to: name)
            }
        }
        wakeEngine()
    }

    public func groupMembers(of conversation: ConversationID) throws(ChatModelError) -> [GroupMemberLine] {
        try wrap { () throws(EngineError) in
            guard case .group(let group) = try account.target(conversation) else { throw .usage("/members lists a group's members") }
            return try account.groupMembers(group).map {
                GroupMemberLine(name: $0.name, isAdmin: $0.isAdmin, state: $0.state, addedBy: $0.addedBy, isSelf: $0.isSelf)
            }
        }
    }

    public func changeGroup(_ conversation: ConversationID, _ change: GroupChange) throws(ChatModelError) {
        try wrap { () throws(EngineError) in
            guard case .group(let group) = try account.target(conversation) else { throw .usage("that is done in a group") }
            switch change {
            case .add(let names): try account.addMembers(group, names)
            case .remove(let name): try account.removeMember(group, name)
            case .leave: try account.leaveGroup(group)
            }
        }
        wakeEngine()
    }

    public func setMuted(_ conversation: ConversationID, _ muted: Bool) throws(ChatModelError) {
        try change(conversation, muted ? .mute : .unmute)
    }

    public func setBlocked(_ conversation: ConversationID, _ blocked: Bool) throws(ChatModelError) {
        try change(conversation, blocked ? .block : .unblock)
    }

    public func delete(_ conversation: ConversationID) throws(ChatModelError) {
        try change(conversation, .delete)
    }

    public func acceptRequest(_ request: ConversationID, replacing: ConversationID?) throws(ChatModelError) -> ConversationID {
        let accepted = try wrap { () throws(EngineError) in
            try account.acceptRequest(account.contact(request), replacing: replacing.map { id throws(EngineError) in try account.contact(id) })
        }
        wakeEngine()
        return accepted.conversation
    }

    public func declineRequest(_ request: ConversationID) throws(ChatModelError) {
        try wrap { () throws(EngineError) in
            let contact = try account.contact(request)
            guard contact.state == .request else { throw EngineError.usage("\(contact.name) is not a message request") }
            try account.declineRequest(contact)
        }
        wakeEngine()
    }

    public func safetyNumber(of conversation: ConversationID) throws(ChatModelError) -> String {
        try wrap { () throws(EngineError) in try account.safetyNumber(of: account.contact(conversation)) }
    }

    public func draft(of conversation: ConversationID) throws(ChatModelError) -> Draft? {
        try wrap { () throws(EngineError) in try account.draft(conversation) }
    }

    /// The engine is woken as for the view's other writes: it then takes the write as the
    /// view's own, where its check for other processes' writes would take it for a command's
    /// and have the view read its list and window again.
    public func setDraft(_ draft: Draft?, for conversation: ConversationID) throws(ChatModelError) {
        try wrap { () throws(EngineError) in try account.setDraft(draft, for: conversation) }
        wakeEngine()
    }

    public func reconnect() { reconnectEngine() }

    private func change(_ conversation: ConversationID, _ change: AccountService.ContactChange) throws(ChatModelError) {
        try wrap { () throws(EngineError) in
            switch try account.target(conversation) {
            case .group(let group): try account.change(group, change)
            case .contact(let contact): try account.change(contact, change)
            }
        }
        wakeEngine()
    }

    // MARK: alert permission

    /// (The view's reads cannot report a failure through `ChatModel`: one that fails asks again.)
    public var alertPermissionAsked: Bool { (try? AlertCenter(account: account).permissionAsked) ?? false }

    /// Not stored (a failed write): the view asks again next time, nothing else changes.
    public func setAlertPermission(_ allowed: Bool) {
        try? AlertCenter(account: account).setDesktopAllowed(allowed)
    }

    // MARK: events

    public var wakeDescriptor: Int32 { events.descriptor }

    public func drainEvents() -> [ChatEvent] { events.drain() }

    private func wrap<T>(_ body: () throws(EngineError) -> T) throws(ChatModelError) -> T {
        do { return try body() } catch { throw ChatModelError(Self.sentence(error.description)) }
    }

    /// An engine error as the status bar shows it: a sentence.
    public static func sentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst() + (text.hasSuffix(".") ? "" : ".")
    }
}

/// Events from the engine thread to the UI thread: a locked queue and a pipe whose read
/// end is readable while the queue holds anything (one byte per non-empty spell, so the
/// pipe never fills).
final class ChatEventQueue: Sendable {
    let descriptor: Int32
    private let writeEnd: Int32
    private struct State {
        var queued: [ChatEvent] = []
        /// A byte is in the pipe for what is queued.
        var signalled = false
        var lastConnection: ConnectionState = .connecting
    }
    private let state = Mutex(State())

    init() throws(EngineError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw .io("cannot create a pipe: \(String(cString: strerror(errno)))")
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        descriptor = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(descriptor)
        close(writeEnd)
    }

    var connection: ConnectionState { state.withLock { $0.lastConnection } }

    func post(_ event: ChatEvent) {
        let poke = state.withLock { state -> Bool in
            if case .connectionChanged(let connection) = event { state.lastConnection = connection }
            state.queued.append(event)
            defer { state.signalled = true }
            return !state.signalled
        }
        if poke {
            var one: UInt8 = 1
            _ = write(writeEnd, &one, 1)
        }
    }

    func drain() -> [ChatEvent] {
        state.withLock { state in
            var buffer = [UInt8](repeating: 0, count: 64)
            while read(descriptor, &buffer, buffer.count) > 0 {}
            state.signalled = false
            defer { state.queued.removeAll(keepingCapacity: true) }
            return state.queued
        }
    }
}

extension EngineChatModel {
    /// `show-in-alerts` (what a banner shows), `bell` (a terminal bell for a message
    /// elsewhere, default off) and `glyphs` (default unicode). A setting that cannot be read gives the quieter choice:
    /// nothing about who, no bell.
    public func takeOpenRequest() -> ConversationID? {
        try? AlertCenter(account: account).takeOpenRequest()
    }

    public var lastOpenConversation: ConversationID? {
        (try? account.store.setting(SettingKey.lastOpenConversation)).flatMap { $0.flatMap(Int64.init) }.map(ConversationID.init)
    }

    public func rememberOpenConversation(_ conversation: ConversationID?) {
        try? account.store.setSetting(SettingKey.lastOpenConversation, conversation.map { String($0.rawValue) })
    }

    public func takeOwedAlerts() -> [String] {
        (try? AlertCenter(account: account).takeOwed()) ?? []
    }

    /// With `desktop`: whether desktop alerts may be shown and `alerts-while-open`; a
    /// setting that cannot be read gives the quieter choice (no desktop alerts).
    public func viewSettings() -> ViewSettings {
        let center = AlertCenter(account: account)
        let desktop: AlertPolicy.Desktop = self.desktop == nil ? .unavailable
            : (try? center.desktopAllowed) == true ? .allowed : .notAllowed
        return ViewSettings(alerts: (try? center.content) ?? .nothing,
                            bell: (try? account.store.setting(SettingKey.bell)) == "on",
                            mouse: (try? account.store.setting(SettingKey.mouse)) != "off",
                            desktop: desktop, whileOpen: (try? center.whileOpen) ?? .off,
                            glyphs: (try? account.store.setting(Setting.glyphs.storeKey)).flatMap(GlyphChoice.init(rawValue:)) ?? .unicode)
    }

    /// Desktop alerts for what arrived while the view runs, by the policy of every alert
    /// (grouped, a summary after five, recorded first so never twice, never for `onScreen`),
    /// when desktop alerts are allowed and there is a desktop.
    public func alertOnDesktop(_ arrivals: [(conversation: ConversationID, id: MessageID)], onScreen: ConversationID?) {
        let center = AlertCenter(account: account)
        guard let desktop, (try? center.desktopAllowed) == true,
              let alerts = try? center.alerts(for: arrivals, onScreen: onScreen) else { return }
        for alert in alerts { desktop.post(alert) }
    }
}
