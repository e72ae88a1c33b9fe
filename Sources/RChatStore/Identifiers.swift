import RChatCore

/// A contact's row in the store. Its own type, so it is never mixed up with a message row.
public struct ContactID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: Int64
    public init(_ rawValue: Int64) { self.rawValue = rawValue }
    public var description: String { "contact #\(rawValue)" }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

// Today a conversation is one contact: the contact's row id is the conversation's id.
extension ContactID {
    public init(_ conversation: ConversationID) { rawValue = conversation.rawValue }
    public var conversation: ConversationID { ConversationID(rawValue) }
}

/// A message's row in the store (not its 128-bit `MessageID`, which only the pair
/// (contact, id) makes unique).
public struct MessageRowID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: Int64
    public init(_ rawValue: Int64) { self.rawValue = rawValue }
    public var description: String { "message #\(rawValue)" }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}
