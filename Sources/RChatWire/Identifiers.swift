import RChatCore
import RChatCrypto

/// Who a relay serves: the hash of a mailbox key. The relay never learns more.
public struct MailboxID: Hashable, Sendable, CustomStringConvertible {
    public static let byteCount = 32
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    public init(publicKey: [UInt8]) {
        bytes = Hash.blake2b(RelayProtocol.mailboxLabel + publicKey)
    }

    public var hex: String { Hex.encode(bytes) }
    /// Short, for logs: enough to tell mailboxes apart, not to identify anyone.
    public var description: String { String(hex.prefix(12)) }
}

/// Rendezvous codes travel as their 32 bytes: the relay compares them and nothing else
/// (RChatCrypto's `RendezvousCode` computes them; its `.bytes` is what goes here).
public let rendezvousCodeBytes = 32

/// A 16-byte token from a contact code: requests sent to it are held for its mailbox.
///
/// A token is derived from the mailbox it belongs to and a 16-byte salt:
/// `BLAKE2b-128("rchat invite v1" ‖ mailbox id ‖ salt)`. A client registers the salt; the
/// relay derives the token from the salt and the mailbox the connection proved, so only the
/// owner of a mailbox can register a token that points to it, and a stranger who read the
/// token in a contact code can never claim it (it would need a salt that derives the same
/// token from the stranger's own mailbox).
public struct InviteToken: Hashable, Sendable {
    public static let byteCount = 16
    public static let saltBytes = 16
    static let label = Array("rchat invite v1".utf8)
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// The token `salt` names for `mailbox`.
    public static func derived(mailbox: MailboxID, salt: [UInt8]) -> InviteToken {
        InviteToken(bytes: Hash.blake2b(label + mailbox.bytes + salt, outputBytes: byteCount))!
    }
}

/// A link between two connections, numbered by the relay; valid on the connection that was told.
public typealias LinkID = UInt32

/// A held item, numbered by the relay; acknowledged by this number.
public typealias HeldItemID = UInt64

/// A mailbox handing itself over to another (after `keys rotate`): the old mailbox key signs
/// `"rchat mailbox move v1" ‖ old mailbox id ‖ new mailbox id`, and the new mailbox's
/// connection presents it (`moveMailbox`). The relay then moves what it holds for the old
/// mailbox to the new one and drops the old one's invites.
public enum MailboxMove {
    static let label = Array("rchat mailbox move v1".utf8)

    public static func statement(from old: MailboxID, to new: MailboxID) -> [UInt8] {
        label + old.bytes + new.bytes
    }
}
