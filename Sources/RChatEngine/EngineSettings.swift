import RChatStore

/// The engine's tunables, read from the account's settings (`rchat settings`).
public struct EngineSettings: Equatable, Sendable {
    /// Receipts wait this long to travel together…
    public var receiptWindowMilliseconds: Int = 200
    /// …or go at once when this many are owed.
    public var receiptBatch: Int = 64
    /// A relay acknowledgement later than this makes a message Not confirmed.
    public var acknowledgementTimeoutSeconds: Int = 15

    public static let receiptWindowKey = "receipt-window-ms"
    public static let receiptBatchKey = "receipt-batch"
    public static let acknowledgementTimeoutKey = "ack-timeout-s"

    /// Each setting, its allowed range and what it means — for `rchat settings`.
    public static let known: [(key: String, range: ClosedRange<Int>, help: String)] = [
        (receiptWindowKey, 0...60_000, "how long receipts wait to be sent together (milliseconds)"),
        (receiptBatchKey, 1...1_000, "how many owed receipts send a batch at once"),
        (acknowledgementTimeoutKey, 1...3_600, "seconds without a relay acknowledgement before Not confirmed"),
    ]

    public init() {}

    public init(store: StoreAccess) throws {
        func int(_ key: String) throws -> Int? { try store.setting(key).flatMap { Int($0) } }
        receiptWindowMilliseconds = try int(Self.receiptWindowKey) ?? receiptWindowMilliseconds
        receiptBatch = try int(Self.receiptBatchKey) ?? receiptBatch
        acknowledgementTimeoutSeconds = try int(Self.acknowledgementTimeoutKey) ?? acknowledgementTimeoutSeconds
    }
}
