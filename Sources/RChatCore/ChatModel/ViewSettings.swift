/// What a banner or an alert for a message in another conversation shows (the
/// `show-in-alerts` setting).
public enum AlertContent: String, Sendable, CaseIterable {
    /// The contact's name and "New message" (the default).
    case name
    /// "rChat" and "New message": nothing about who.
    case nothing
    /// The name and the start of the message, cleaned.
    case message
}

/// The account's settings that change what the view shows, read at start and again when a
/// command changes them while the view runs.
public struct ViewSettings: Equatable, Sendable {
    public var alerts: AlertContent
    /// `bell on`: a terminal bell on a new message in a conversation that is not open.
    public var bell: Bool

    public init(alerts: AlertContent = .name, bell: Bool = false) {
        self.alerts = alerts
        self.bell = bell
    }
}
