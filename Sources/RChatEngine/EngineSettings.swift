import RChatCore
import RChatStore

/// The engine's tunables, read from the account's settings (`rchat settings`, `Setting`).
public struct EngineSettings: Equatable, Sendable {
    /// Receipts wait this long to travel together…
    public var receiptWindowMilliseconds = Setting.receiptWindow.numbers!.default
    /// …or go at once when this many are owed.
    public var receiptBatch = Setting.receiptBatch.numbers!.default
    /// A relay acknowledgement later than this makes a message Not confirmed.
    public var acknowledgementTimeoutSeconds = Setting.acknowledgementTimeout.numbers!.default
    /// The largest file `sendFile` takes, in MB of 1,048,576 bytes.
    public var maxAttachmentMB = Setting.maxAttachment.numbers!.default
    /// The largest file a contact may send (`IncomingFilePolicy`), in MB of 1,048,576 bytes.
    public var maxIncomingMB = Setting.maxIncoming.numbers!.default
    /// Dummies in open sessions and cover to the own mailbox (`SteadyTraffic`).
    public var steadyTraffic = SteadyTraffic.default

    public init() {}

    /// A stored value that is not a whole number is an error, never the default.
    public init(store: StoreAccess) throws {
        func int(_ setting: Setting) throws -> Int? {
            guard let text = try store.setting(setting.storeKey) else { return nil }
            guard let n = Int(text) else {
                throw StoreError.malformedValue(table: "settings", column: setting.storeKey, detail: "not a whole number")
            }
            return n
        }
        receiptWindowMilliseconds = try int(.receiptWindow) ?? receiptWindowMilliseconds
        receiptBatch = try int(.receiptBatch) ?? receiptBatch
        acknowledgementTimeoutSeconds = try int(.acknowledgementTimeout) ?? acknowledgementTimeoutSeconds
        maxAttachmentMB = try int(.maxAttachment) ?? maxAttachmentMB
        maxIncomingMB = try int(.maxIncoming) ?? maxIncomingMB
        if let text = try store.setting(Setting.steadyTraffic.storeKey) {
            guard let pace = SteadyTraffic(rawValue: text) else {
                throw StoreError.malformedValue(table: "settings", column: Setting.steadyTraffic.storeKey, detail: "not off, low or normal")
            }
            steadyTraffic = pace
        }
    }
}
