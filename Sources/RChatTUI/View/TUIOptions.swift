import Foundation
import RChatCore

/// What a banner for a message in another conversation shows (the alert setting).
public enum AlertContent: String, Sendable, CaseIterable {
    /// The contact's name and "New message" (the default).
    case name
    /// "rChat" and "New message": nothing about who.
    case nothing
    /// The name and the start of the message, cleaned.
    case message
}

/// A command only the demo has (e.g. "Sam goes offline"), typed as `/NAME ARGS` and listed
/// in the help overlay. The action returns a line for the status bar, or nil.
public struct DemoCommand {
    public var name: String
    public var help: String
    public var action: ([String]) -> String?

    public init(name: String, help: String, action: @escaping ([String]) -> String?) {
        self.name = name; self.help = help; self.action = action
    }
}

public struct TUIOptions {
    public var alerts: AlertContent
    public var demoCommands: [DemoCommand]
    /// Where timestamps are read (tests pin it).
    public var timeZone: TimeZone
    /// How long a banner stays, in seconds, unless a key dismisses it first.
    public var bannerSeconds: Int64
    /// Open this conversation at start (the demo opens Sam).
    public var openAtStart: String?
    /// `bell on`: a terminal bell on a new message in a conversation that is not open.
    public var bell: Bool

    public init(alerts: AlertContent = .name, demoCommands: [DemoCommand] = [], timeZone: TimeZone = .current,
                bannerSeconds: Int64 = 5, openAtStart: String? = nil, bell: Bool = false) {
        self.alerts = alerts; self.demoCommands = demoCommands; self.timeZone = timeZone
        self.bannerSeconds = bannerSeconds; self.openAtStart = openAtStart; self.bell = bell
    }
}
