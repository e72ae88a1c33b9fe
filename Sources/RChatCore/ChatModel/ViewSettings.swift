/// The account's settings that change what the view shows, read at start and again when a
/// command changes them while the view runs.
public struct ViewSettings: Equatable, Sendable {
    public var alerts: AlertPolicy.Content
    /// `bell on`: a terminal bell on a new message in a conversation that is not open.
    public var bell: Bool

    public init(alerts: AlertPolicy.Content = .name, bell: Bool = false) {
        self.alerts = alerts
        self.bell = bell
    }
}
