import RChatCore

/// A contact's row in the store. Its own type, so it is never mixed up with a message row.
public struct ContactID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: Int64
    public init(_ rawValue: Int64) { self.rawValue = rawValue }
    public var description: String { "contact #\(rawValue)" }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

// A contact's direct conversation has the contact's row id (schema step 15,
// `SchemaConversations`): every id that was a contact's before conversations stays valid.
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

/// One delivery of an outgoing message: the message, and the member it goes to (a contact:
/// in a direct conversation, the one whose id the conversation has).
public struct DeliveryKey: Hashable, Sendable, CustomStringConvertible {
    public let message: MessageRowID
    public let member: ContactID
    public init(message: MessageRowID, member: ContactID) {
        self.message = message
        self.member = member
    }
    public var description: String { "\(message) to \(member)" }
}
