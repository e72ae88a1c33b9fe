import Foundation
import RChatCore
import RChatStore

/// Turns what arrived into alerts through `AlertPolicy`, and records every alerted message
/// in the store first, so nothing is alerted twice — across checks, the view and the
/// linger after it quits.
public struct AlertCenter: Sendable {
    let store: Store
    let clock: Clock

    public init(account: AccountService) {
        store = account.store
        clock = account.clock
    }

    /// Desktop alerts were allowed when the view asked (the first time a conversation was
    /// opened). Until then, and if refused, alerts go to the terminal only.
    /// A setting that cannot be read is an error, never the default: "nothing in alerts"
    /// must not become names in alerts because a read failed.
    public var desktopAllowed: Bool {
        get throws(EngineError) { try setting(SettingKey.alertsPermission) == "allowed" }
    }

    private func setting(_ key: String) throws(EngineError) -> String? {
        try AccountService.wrap { try store.setting(key) }
    }

    public func setDesktopAllowed(_ allowed: Bool) throws {
        try store.setSetting(SettingKey.alertsPermission, allowed ? "allowed" : "denied")
    }

    /// Whether the view still has to ask.
    public var permissionAsked: Bool {
        get throws(EngineError) { try setting(SettingKey.alertsPermission) != nil }
    }

    public var content: AlertPolicy.Content {
        get throws(EngineError) { try setting(SettingKey.showInAlerts).flatMap(AlertPolicy.Content.init(rawValue:)) ?? .name }
    }

    /// `alerts-while-open`: desktop alerts while the view runs.
    public var whileOpen: AlertPolicy.WhileOpen {
        get throws(EngineError) {
            guard let text = try setting(Setting.alertsWhileOpen.storeKey) else { return .default }
            guard let value = AlertPolicy.WhileOpen(rawValue: text) else {
                throw .io("the setting alerts-while-open reads '\(TerminalText.sanitized(text, breaks: .shown))', not off, unfocused or always")
            }
            return value
        }
    }

    /// How many owed alert lines are kept; older ones give way.
    public static let owedLimit = 20

    /// An alert that could not be shown (the linger's terminal was gone): kept, one line,
    /// for the next start of the view.
    public func owe(_ alert: AlertPolicy.Alert) throws(EngineError) {
        let line = TerminalText.sanitized(alert.line, breaks: .shown)
        try AccountService.wrap {
            try store.transaction { tx in
                let owed = try tx.setting(SettingKey.owedAlerts).map { $0.split(separator: "\n").map(String.init) } ?? []
                try tx.setSetting(SettingKey.owedAlerts, (owed + [line]).suffix(Self.owedLimit).joined(separator: "\n"))
            }
        }
    }

    /// The alerts owed since the view last showed them, oldest first; taken (removed).
    public func takeOwed() throws(EngineError) -> [String] {
        try AccountService.wrap {
            try store.transaction { tx in
                guard let owed = try tx.setting(SettingKey.owedAlerts) else { return [] }
                try tx.setSetting(SettingKey.owedAlerts, nil)
                return owed.split(separator: "\n").map(String.init)
            }
        }
    }

    /// An alert for `conversation` was clicked: a running view is asked to open it (it takes
    /// the request at its next look at the store, which the local wake-up starts).
    public func requestOpen(_ conversation: ConversationID) throws(EngineError) {
        try AccountService.wrap { try store.setSetting(SettingKey.openRequest, String(conversation.rawValue)) }
    }

    /// The conversation a clicked alert asked to open, if any; taken (removed).
    public func takeOpenRequest() throws(EngineError) -> ConversationID? {
        // Asked at every change another process makes: a read, a transaction only when there is one.
        guard try openRequestWaiting else { return nil }
        return try AccountService.wrap {
            try store.transaction { tx in
                guard let text = try tx.setting(SettingKey.openRequest) else { return nil }
                try tx.setSetting(SettingKey.openRequest, nil)
                return Int64(text).map(ConversationID.init)
            }
        }
    }

    /// Whether the request is still there (no view took it).
    public var openRequestWaiting: Bool {
        get throws(EngineError) { try setting(SettingKey.openRequest) != nil }
    }

    /// What an arrival alerts as: its content's kind, and for a reaction, a reaction only
    /// when it is to this side's own message and `alert-reactions` is on.
    static func kind(of message: StoredMessage, _ tx: StoreTransaction) throws -> AlertPolicy.Kind {
        if case .control(.reaction(_, let emoji?, _)) = message.content {
            return try reactionAlerts(message.content, in: message.conversation, tx) ? .reaction(emoji) : .silent
        }
        return AlertPolicy.Kind(message.content)
    }

    /// Whether a reaction alerts: one (not taken back) to this side's own message, with
    /// `alert-reactions` on (the default).
    static func reactionAlerts(_ content: MessageContent, in conversation: ConversationID, _ tx: some StoreAccess) throws -> Bool {
        guard case .control(.reaction(let target, _?, _)) = content,
              try tx.setting(Setting.alertReactions.storeKey) != "off",
              let reacted = try tx.message(conversation: conversation, id: target) else { return false }
        return reacted.isOutgoing
    }

    /// The alerts to show for these arrivals (conversation, message id), recorded as shown.
    /// `onScreen`: the conversation the view shows, which never alerts.
    public func alerts(for arrivals: [(conversation: ConversationID, id: MessageID)],
                       onScreen: ConversationID? = nil) throws(EngineError) -> [AlertPolicy.Alert] {
        let content = try self.content
        return try AccountService.wrap { try store.transaction { tx in
            var facts: [(AlertPolicy.Arrival, ConversationID, MessageRowID)] = []
            for (conversation, id) in arrivals {
                guard let message = try tx.message(conversation: conversation, id: id), !message.isOutgoing else { continue }
                let arrival: AlertPolicy.Arrival
                if let group = try tx.group(conversation) {
                    // Titled with the group; its author named in the text; muted and blocked the group's.
                    guard let author = try message.author.flatMap({ try tx.contact(id: $0) }) else { continue }
                    arrival = AlertPolicy.Arrival(
                        contactName: author.name, conversation: conversation, kind: try Self.kind(of: message, tx),
                        contactMuted: group.isMuted, contactBlockedOrDeleted: group.isBlocked || author.isBlocked || author.isDeleted,
                        alreadyAlerted: try tx.hasAlert(message: message.rowID, kind: "message"),
                        onScreen: onScreen == conversation, group: group.name)
                } else {
                    guard let contact = try tx.contact(id: ContactID(conversation)) else { continue }
                    arrival = AlertPolicy.Arrival(
                        contactName: contact.name, conversation: conversation,
                        kind: contact.state == .request ? .request : try Self.kind(of: message, tx),
                        contactMuted: contact.isMuted, contactBlockedOrDeleted: contact.isBlocked || contact.isDeleted,
                        alreadyAlerted: try tx.hasAlert(message: message.rowID, kind: "message"),
                        onScreen: onScreen == conversation)
                }
                facts.append((arrival, conversation, message.rowID))
            }
            for (arrival, conversation, row) in facts {
                guard let alert = AlertPolicy.alert(for: arrival, content: content) else { continue }
                _ = try tx.recordAlert(conversation: conversation, message: row, kind: "message", title: alert.title, text: alert.text,
                                       at: clock.now())
            }
            return AlertPolicy.alerts(for: facts.map(\.0), content: content)
        } }
    }
}

extension AlertCenter {
    /// The desktop notification just shown for `conversation`: kept with the alerts recorded
    /// for it in the last minute, so it is closed when their messages disappear.
    public func recordNotification(_ id: Int64, conversation: ConversationID) throws(EngineError) {
        try AccountService.wrap {
            try store.database.execute("""
                UPDATE alerts SET notification_id = ? WHERE conversation_id = ? AND notification_id IS NULL AND created_at >= ?
                """, [.integer(id), .integer(ContactID(conversation).rawValue), .integer(clock.now() - 60)])
        }
    }
}

/// Where alerts appear: the desktop's notification service when one is reachable (never
/// blocking: a hard time limit per alert), else the terminal; `--print` writes each as
/// TITLE<TAB>TEXT to standard output.
public enum AlertSink: Sendable {
    /// The desktop: its notification service on the session bus at `bus` (nil: the one GIO
    /// finds through the display), spoken to over D-Bus from inside the process
    /// (`DesktopBus`), so an alert's title and text are never in a command line. With
    /// `onClick` (the command line of `rchat notify` for this account), each alert is handed
    /// to that command, started in the background and given the title and text on its
    /// standard input, which shows it with a default action and opens its conversation when
    /// it is clicked; without, it is shown here, waiting at most two seconds.
    case desktop(bus: String?, onClick: [String]? = nil)
    /// Standard error.
    case terminal
    /// A terminal device by its path: the one the view ran in, written to by the linger
    /// after the view quit (nothing if it is gone or no longer a terminal).
    case device(path: String)
    case print

    /// The desktop when there is one, else the terminal.
    public static func detect(environment: [String: String] = ProcessInfo.processInfo.environment,
                              onClick: [String]? = nil) -> AlertSink {
        desktop(environment: environment, onClick: onClick) ?? .terminal
    }

    /// The desktop, when there is one here: a session bus (`DBUS_SESSION_BUS_ADDRESS`, or
    /// the socket `$XDG_RUNTIME_DIR/bus`) or a display (`DISPLAY`, `WAYLAND_DISPLAY`). nil
    /// over ssh, on a console, in a container without them.
    public static func desktop(environment: [String: String] = ProcessInfo.processInfo.environment,
                               onClick: [String]? = nil) -> AlertSink? {
        func set(_ key: String) -> Bool { !(environment[key] ?? "").isEmpty }
        let bus = DesktopBus.address(environment: environment)
        guard bus != nil || set("DISPLAY") || set("WAYLAND_DISPLAY") else { return nil }
        return .desktop(bus: bus, onClick: onClick)
    }

    /// What `rchat notify` reads on its standard input: the title, then the text, each one
    /// line (both are sanitized to one line before).
    public static func notifyInput(title: String, text: String) -> Data { Data("\(title)\n\(text)\n".utf8) }

    /// Shows the alert; false when it could not be shown anywhere (a terminal device that is
    /// gone).
    @discardableResult
    public func post(_ alert: AlertPolicy.Alert) -> Bool {
        // Each field on one line, nothing a terminal (or the TITLE<TAB>TEXT format) acts on.
        let alert = AlertPolicy.Alert(title: TerminalText.sanitized(alert.title, breaks: .shown),
                                      text: TerminalText.sanitized(alert.text, breaks: .shown), contact: alert.contact,
                                      conversation: alert.conversation)
        switch self {
        case .print:
            FileHandle.standardOutput.write(Data("\(alert.title)\t\(alert.text)\n".utf8))
        case .terminal:
            FileHandle.standardError.write(Data("\(alert.line)\n".utf8))
        case .device(let path):
            // Never blocks and never becomes our controlling terminal; a closed terminal
            // (its pty gone) or anything that is not one is refused.
            let fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            guard isatty(fd) == 1 else { return false }
            let bytes = Array("\(alert.line)\n".utf8)
            return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
        case .desktop(let bus, let onClick?):
            // Shown, and waited for, by `rchat notify` in the background: its command line
            // says only which conversation it opens, never more.
            let conversation = alert.conversation.map { ["--conversation", String($0.rawValue)] } ?? []
            guard Detached.start(onClick + conversation, input: Self.notifyInput(title: alert.title, text: alert.text),
                                 environment: bus.map { ["DBUS_SESSION_BUS_ADDRESS": $0] } ?? [:]) else {
                return AlertSink.terminal.post(alert)
            }
        case .desktop(let bus, nil):
            // At most two seconds per alert: a stuck notification service never holds us up.
            do {
                _ = try DesktopBus(address: bus).notify(title: alert.title, body: AlertPolicy.desktopBody(alert.text), timeout: 2)
            } catch {
                return AlertSink.terminal.post(alert)
            }
        }
        return true
    }
}
