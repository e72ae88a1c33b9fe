import RChatSQL

/// The keys of the `settings` table. Values are text; their meaning belongs to the engine.
public enum SettingKey {
    /// "Show in alerts": `name` (default), `nothing` or `message`.
    public static let showInAlerts = "show_in_alerts"
    /// Whether alerts were allowed, asked the first time a conversation opens.
    public static let alertsPermission = "alerts_permission"
    /// "on": a terminal bell in the view for a new message in another conversation
    /// (default off).
    public static let bell = "bell"
    /// "off": the view leaves the mouse to the terminal (default on).
    public static let mouse = "mouse"
    /// How long receipts wait to go out in one batch, in seconds.
    public static let receiptWindow = "receipt_window"
    /// Alerts the linger could not show (the terminal it was started from was gone): their
    /// lines, one per line, shown at the next start of the view and then removed.
    public static let owedAlerts = "owed_alerts"
    /// A conversation (contact id) whose alert was clicked, for a running view to open;
    /// taken by the view that opens it.
    public static let openRequest = "open_request"
    /// The conversation (contact id) open in the view when it last quit, or last opened:
    /// the next start opens it again.
    public static let lastOpenConversation = "last_open_conversation"
}

extension StoreAccess {
    public func setting(_ key: String) throws -> String? {
        try database.queryOne("SELECT value FROM settings WHERE key = ?", [.text(key)])?.string("value")
    }

    /// Sets a setting; nil removes it (back to the default).
    public func setSetting(_ key: String, _ value: String?) throws {
        if let value {
            try database.execute("""
                INSERT INTO settings (key, value) VALUES (?, ?)
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """, [.text(key), .text(value)])
        } else {
            try database.execute("DELETE FROM settings WHERE key = ?", [.text(key)])
        }
    }

    public func settings() throws -> [String: String] {
        var all: [String: String] = [:]
        for row in try database.query("SELECT key, value FROM settings") {
            all[try row.string("key")] = try row.string("value")
        }
        return all
    }
}
