import RChatCore
import RChatStore

/// A setting of `rchat settings`: its name, what it takes, where the store keeps it, what
/// it shows and its help — one place for each.
public enum Setting: String, CaseIterable, Sendable {
    case showInAlerts = "show-in-alerts"
    case desktopAlerts = "desktop-alerts"
    case alertsWhileOpen = "alerts-while-open"
    case alertReactions = "alert-reactions"
    case bell
    case receiptWindow = "receipt-window-ms"
    case receiptBatch = "receipt-batch"
    case acknowledgementTimeout = "ack-timeout-s"
    case maxAttachment = "max-attachment-mb"
    case maxIncoming = "max-incoming-mb"
    case steadyTraffic = "steady-traffic"
    case mouse
    case glyphs

    /// Its key in the store's settings table.
    public var storeKey: String {
        switch self {
        case .showInAlerts: SettingKey.showInAlerts
        case .desktopAlerts: SettingKey.alertsPermission
        case .bell: SettingKey.bell
        case .mouse: SettingKey.mouse
        case .alertsWhileOpen, .alertReactions, .receiptWindow, .receiptBatch, .acknowledgementTimeout, .maxAttachment, .maxIncoming,
             .steadyTraffic, .glyphs: rawValue
        }
    }

    /// The whole numbers a numeric setting takes, and its default; nil for the others.
    public var numbers: (range: ClosedRange<Int>, default: Int)? {
        switch self {
        case .receiptWindow: (0...60_000, 200)
        case .receiptBatch: (1...1_000, 64)
        case .acknowledgementTimeout: (1...3_600, 15)
        case .maxAttachment: (1...1_048_576, 100)
        case .maxIncoming: (1...1_048_576, Int(IncomingFilePolicy.defaultMaximumMB))
        case .showInAlerts, .desktopAlerts, .alertsWhileOpen, .alertReactions, .bell, .steadyTraffic, .mouse, .glyphs: nil
        }
    }

    /// What it takes and does, for `rchat settings --help`.
    public var help: String {
        switch self {
        case .showInAlerts: "name (default), nothing or message: what an alert shows"
        case .desktopAlerts: "on or off: desktop notifications (asked the first time a conversation is opened in the full-screen view)"
        case .alertsWhileOpen: "off, unfocused (default) or always: desktop alerts while the full-screen view runs, for conversations not on screen (unfocused: only while its window has lost focus or its tmux or screen session is detached)"
        case .alertReactions: "on (default) or off: an alert when someone reacts to your message (reactions to others' messages never alert)"
        case .bell: "on or off (default): a terminal bell in the full-screen view for a new message in another conversation (not muted ones)"
        case .receiptWindow: "how long receipts wait to be sent together, in milliseconds (default 200)"
        case .receiptBatch: "how many owed receipts send a batch at once (default 64)"
        case .acknowledgementTimeout: "seconds without a relay acknowledgement before Not confirmed (default 15)"
        case .maxAttachment: "the largest file sent, in MB of 1,048,576 bytes (default 100)"
        case .maxIncoming: "the largest file a contact may send you, in MB of 1,048,576 bytes (default 2048); a larger one is not downloaded and a row says so"
        case .mouse: "on (default) or off: in the full-screen view the wheel scrolls the pane under the pointer and a click selects a conversation or a message (Shift with the mouse keeps the terminal's own selection); off leaves the mouse to the terminal"
        case .steadyTraffic: "off, low or normal (default): while a conversation is open, a frame every 10 s (low) or 2 s (normal), a dummy when there is nothing to send, and cover frames to your own mailbox, so the relay cannot tell chatting from quiet"
        case .glyphs: "unicode (default) or ascii: the characters of the full-screen view's statuses, borders and marks (ascii: for a font that lacks even the common ones; what contacts write is drawn as written)"
        }
    }

    /// The value stored for what the user typed; the one-line refusal when it is not one
    /// this setting takes.
    public func stored(from value: String) throws(EngineError) -> String {
        switch self {
        case .showInAlerts:
            guard AlertPolicy.Content(rawValue: value) != nil else {
                throw .usage("show-in-alerts is one of: \(AlertPolicy.Content.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return value
        case .desktopAlerts, .bell, .mouse, .alertReactions:
            guard value == "on" || value == "off" else { throw .usage("\(rawValue) is on or off") }
            return self == .desktopAlerts ? (value == "on" ? "allowed" : "denied") : value
        case .alertsWhileOpen:
            guard AlertPolicy.WhileOpen(rawValue: value) != nil else {
                throw .usage("alerts-while-open is one of: \(AlertPolicy.WhileOpen.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return value
        case .steadyTraffic:
            guard SteadyTraffic(rawValue: value) != nil else {
                throw .usage("steady-traffic is one of: \(SteadyTraffic.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return value
        case .glyphs:
            guard GlyphChoice(rawValue: value) != nil else { throw .usage("glyphs is unicode or ascii") }
            return value
        case .receiptWindow, .receiptBatch, .acknowledgementTimeout, .maxAttachment, .maxIncoming:
            let range = numbers!.range
            guard let n = Int(value), range.contains(n) else {
                throw .usage("\(rawValue) takes a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return String(n)
        }
    }

    /// What `rchat settings` shows for the stored value (nil: never set).
    public func shown(_ stored: String?) -> String {
        switch self {
        case .showInAlerts: stored ?? AlertPolicy.Content.name.rawValue
        case .desktopAlerts: stored.map { $0 == "allowed" ? "on" : "off" } ?? "not asked yet"
        case .alertsWhileOpen: stored ?? AlertPolicy.WhileOpen.default.rawValue
        case .bell: stored == "on" ? "on" : "off"
        case .mouse: stored == "off" ? "off" : "on"
        case .alertReactions: stored == "off" ? "off" : "on"
        case .steadyTraffic: stored ?? SteadyTraffic.default.rawValue
        case .glyphs: stored ?? GlyphChoice.unicode.rawValue
        case .receiptWindow, .receiptBatch, .acknowledgementTimeout, .maxAttachment, .maxIncoming: stored ?? String(numbers!.default)
        }
    }
}
