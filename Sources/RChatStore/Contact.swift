import Foundation
import RChatCore

/// What the store records about a contact's standing, besides the flags.
public enum ContactState: String, CaseIterable, Sendable {
    case ok
    /// A handshake presented an account key other than the pinned one: nothing can be sent
    /// until the contact's code is entered again.
    case keysDontMatch = "keys-dont-match"
    /// Someone wrote first; not accepted yet.
    case request
}

/// The one state a contact is shown with (contact list, `rchat contacts --json`): Core's
/// read model, derived here from what the store records.
public typealias ContactDisplayState = ConversationSummary.State

extension ConversationSummary.State {
    /// The most important fact wins: keys don't match > blocked > muted > request > ok.
    /// A mismatch comes first because it is a safety warning; blocking and muting are the
    /// user's own choices, so they outrank a pending request.
    public static func of(state: ContactState, isBlocked: Bool, isMuted: Bool) -> ContactDisplayState {
        if state == .keysDontMatch { return .keysDontMatch }
        if isBlocked { return .blocked }
        if isMuted { return .muted }
        if state == .request { return .request }
        return .ok
    }
}

/// A contact, with the keys pinned when their code was entered.
public struct Contact: Equatable, Sendable {
    public let id: ContactID
    public var name: String
    public var accountKey: [UInt8]
    public var deviceKey: [UInt8]
    public var deviceCertificate: [UInt8]
    public var relayAddress: String?
    public var inviteToken: [UInt8]?
    public var state: ContactState
    public var isBlocked: Bool
    public var isMuted: Bool
    public var isDeleted: Bool
    /// Whether they have accepted our current account key (false after `keys rotate` until
    /// they do: until then we speak to them with the previous key).
    public var rotationAcknowledged: Bool = true
    /// When the pinned keys last changed (first pinned: the time added).
    public var keysChangedAt: Int64
    public var addedAt: Int64
    /// Their contact code as last entered (signed by their account), to hand on to a group's
    /// other members; nil for one entered before rChat kept it, or a request's sender.
    public var code: String? = nil
    public var kind: Kind = .contact
    /// The account key they rotated away from (their last rotation taken here), nil before any.
    public var previousAccountKey: [UInt8]? = nil

    /// A person the user added (or who wrote first), or one known only from a group's log.
    public enum Kind: String, Sendable, Equatable {
        case contact
        /// Met through a group: a pairwise channel, no one-to-one conversation, not listed.
        case member
    }

    public var displayState: ContactDisplayState {
        .of(state: state, isBlocked: isBlocked, isMuted: isMuted)
    }

    /// The form names are compared in (Core's `ContactNames.key`): "SAM", "sam" and "Sam"
    /// are one name, as are "ÉVA" and "e\u{301}va".
    public static func nameKey(_ name: String) -> String { ContactNames.key(name) }
}

/// What is known when a contact is added (from their contact code, or a request).
public struct NewContact: Sendable {
    public var name: String
    public var accountKey: [UInt8]
    public var deviceKey: [UInt8]
    public var deviceCertificate: [UInt8]
    public var relayAddress: String?
    public var inviteToken: [UInt8]?
    public var state: ContactState
    /// The code it came from, as entered (nil: a request's sender).
    public var code: String?
    public var kind: Contact.Kind = .contact

    public init(name: String, accountKey: [UInt8], deviceKey: [UInt8], deviceCertificate: [UInt8],
                relayAddress: String?, inviteToken: [UInt8]? = nil, state: ContactState = .ok, code: String? = nil,
                kind: Contact.Kind = .contact) {
        self.code = code
        self.kind = kind
        self.name = name
        self.accountKey = accountKey
        self.deviceKey = deviceKey
        self.deviceCertificate = deviceCertificate
        self.relayAddress = relayAddress
        self.inviteToken = inviteToken
        self.state = state
    }
}
