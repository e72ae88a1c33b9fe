/// A conversation's identity across the view, the engine and the store: the store's stable
/// row id for it, which no rename changes. A name is display text only; everything past the
/// command line picks a conversation by this.
public struct ConversationID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: Int64
    public init(_ rawValue: Int64) { self.rawValue = rawValue }
    public var description: String { "conversation #\(rawValue)" }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    /// A group's: the store gives groups negative ids, contacts' conversations positive ones.
    public var isGroup: Bool { rawValue < 0 }
}
