/// The keys one session uses: one key per direction, and the session id that binds every
/// envelope to this session.
public struct SessionKeys: Sendable {
    public static let sessionIDBytes = 16

    public let sessionID: [UInt8]
    /// This side's role in the handshake that made the session.
    public let role: Handshake.Role
    public let sendKey: SecretBytes
    public let receiveKey: SecretBytes

    public init(sessionID: [UInt8], role: Handshake.Role, sendKey: SecretBytes, receiveKey: SecretBytes) {
        precondition(sessionID.count == Self.sessionIDBytes && sendKey.count == AEAD.keyBytes && receiveKey.count == AEAD.keyBytes)
        self.sessionID = sessionID
        self.role = role
        self.sendKey = sendKey
        self.receiveKey = receiveKey
    }

    /// What is needed to read the peer's envelopes of this session, now or after the
    /// session has been replaced.
    public var receiving: ReceiveKey { ReceiveKey(sessionID: sessionID, senderRole: role.peer, key: receiveKey) }
}

/// The key that opens envelope bodies the peer sent in one session.
public struct ReceiveKey: Sendable {
    public let sessionID: [UInt8]
    /// The role of the side that sent with this key (part of each body's nonce).
    public let senderRole: Handshake.Role
    public let key: SecretBytes

    public init(sessionID: [UInt8], senderRole: Handshake.Role, key: SecretBytes) {
        precondition(sessionID.count == SessionKeys.sessionIDBytes && key.count == AEAD.keyBytes)
        self.sessionID = sessionID
        self.senderRole = senderRole
        self.key = key
    }
}

/// What the handshake proved about the peer. The account key always equals the pinned one
/// (anything else is `HandshakeError.keysDontMatch`); the device key is certified by that
/// account and signed the transcript, but may not be the pinned one (a new machine) — the
/// engine decides what that means.
public struct VerifiedPeer: Sendable, Equatable {
    public let accountKey: [UInt8]
    public let deviceKey: [UInt8]
    /// The device key equals the one pinned from the contact's code.
    public let deviceKeyIsPinned: Bool
    /// The peer has no saved state for this conversation (reinstalled, new machine, first run).
    public let startedOver: Bool
    /// The peer's stored reconnect counter; nil when it started over.
    public let reconnectCounter: UInt64?
    /// Opaque bytes the peer attached (e.g. a signed could-not-read notice); empty if none.
    public let extensionBytes: [UInt8]
}

/// The result of a completed handshake.
public struct Session: Sendable {
    public let keys: SessionKeys
    /// The Double Ratchet the session's envelopes are sealed with, from its first state.
    public let ratchet: Ratchet
    public let peer: VerifiedPeer
    /// The reconnect counter both sides store with this session (`ReconnectCounter.next`).
    public let nextReconnectCounter: UInt64

    public var id: [UInt8] { keys.sessionID }
}
