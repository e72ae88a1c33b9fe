import RChatCore

/// "These messages could not be read here" (docs/PROTOCOL.md): sent inside a new session by a side
/// that lost its state, signed with its DEVICE key. Only a notice that verifies against the
/// pinned device key may trigger an automatic resend, so a stolen copy of the account keys
/// alone can never cause one.
///
/// Each notice is bound to the session it was written for (the id both sides derived from
/// that session's handshake transcript): the reader accepts it only in that session, so a
/// notice the relay kept and delivers again in a later session does nothing. (A replay
/// within the session is the reader's to recognise: it keeps what it has read.)
///
/// Layout:
///
///     u8  version (2)
///     16  conversation tag (`ConversationSecret.tag`)
///     16  session id (`SessionKeys.sessionID` of the writer's current session)
///     i64 time written (unix seconds)
///     u16 count ‖ count × 16-byte message ids
///     64  device signature over "rchat could-not-read notice v2" ‖ all of the above
///
/// At most `maxMessageIDs` ids, so a notice fits a handshake extension (65535 bytes).
public struct CouldNotReadNotice: Sendable, Equatable {
    public static let version: UInt8 = 2
    public static let maxMessageIDs = 4000

    public let messageIDs: [MessageID]
    public let conversationTag: [UInt8]
    public let sessionID: [UInt8]
    public let time: Int64

    public init(messageIDs: [MessageID], conversation: ConversationSecret, session: [UInt8], time: Int64) {
        precondition(messageIDs.count <= Self.maxMessageIDs, "split could-not-read notices at \(Self.maxMessageIDs) ids")
        precondition(session.count == SessionKeys.sessionIDBytes, "a notice names a session by its 16-byte id")
        self.messageIDs = messageIDs
        conversationTag = conversation.tag
        sessionID = session
        self.time = time
    }

    private init(messageIDs: [MessageID], conversationTag: [UInt8], sessionID: [UInt8], time: Int64) {
        self.messageIDs = messageIDs
        self.conversationTag = conversationTag
        self.sessionID = sessionID
        self.time = time
    }

    /// The notice as bytes, signed by this machine's device key.
    public func signed(by device: SigningKey) -> [UInt8] {
        let body = self.body()
        return body + device.sign(Self.signedMessage(body))
    }

    /// Checks the notice against `deviceKey` — the pinned one to allow an automatic resend,
    /// or the handshake's verified-but-unpinned one to show "Not delivered" — against this
    /// conversation, and against `session`, the reader's current session (nil: none, and
    /// then no notice is current). Freshness (`time`) is for the caller to judge.
    public static func open(_ bytes: [UInt8], conversation: ConversationSecret, session: [UInt8]?,
                            signedBy deviceKey: [UInt8]) throws(CouldNotReadNoticeError) -> CouldNotReadNotice {
        guard let v = bytes.first else { throw .malformed }
        guard v == version else { throw .unsupportedVersion(v) }
        guard bytes.count >= 1 + ConversationSecret.tagBytes + SessionKeys.sessionIDBytes + 8 + 2 + SigningKey.signatureBytes
        else { throw .malformed }
        let body = Array(bytes[..<(bytes.count - SigningKey.signatureBytes)])
        let signature = Array(bytes[(bytes.count - SigningKey.signatureBytes)...])
        guard Signature.verify(signature, message: signedMessage(body), publicKey: deviceKey) else { throw .badSignature }
        var r = ByteReader(body, offset: 1)
        let notice: CouldNotReadNotice
        do {
            let tag = try r.raw(ConversationSecret.tagBytes)
            let sessionID = try r.raw(SessionKeys.sessionIDBytes)
            let time = Int64(bitPattern: try r.u64())
            let count = Int(try r.u16())
            guard count <= maxMessageIDs, r.remaining == count * MessageID.byteCount else { throw CouldNotReadNoticeError.malformed }
            var ids: [MessageID] = []
            ids.reserveCapacity(count)
            for _ in 0..<count { ids.append(MessageID(bytes: try r.raw(MessageID.byteCount))!) }
            notice = CouldNotReadNotice(messageIDs: ids, conversationTag: tag, sessionID: sessionID, time: time)
        } catch {
            throw .malformed
        }
        guard constantTimeEqual(notice.conversationTag, conversation.tag) else { throw .otherConversation }
        guard let session, constantTimeEqual(notice.sessionID, session) else { throw .otherSession }
        return notice
    }

    private func body() -> [UInt8] {
        var w = ByteWriter(capacity: 43 + messageIDs.count * MessageID.byteCount)
        w.u8(Self.version)
        w.raw(conversationTag)
        w.raw(sessionID)
        w.u64(UInt64(bitPattern: time))
        w.u16(UInt16(messageIDs.count))
        for id in messageIDs { w.raw(id) }
        return w.bytes
    }

    /// What the device key signs (internal: the could-not-read fuzz target signs what it reads).
    static func signedMessage(_ body: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 40 + body.count)
        w.long(Array("rchat could-not-read notice v2".utf8))
        w.raw(body)
        return w.bytes
    }
}

public enum CouldNotReadNoticeError: Error, Equatable, CustomStringConvertible {
    case malformed
    case unsupportedVersion(UInt8)
    /// Not signed by the given device key (or altered).
    case badSignature
    /// Validly signed, but about another conversation.
    case otherConversation
    /// Validly signed, but written for another session than the reader's current one: an
    /// old notice delivered again.
    case otherSession

    public var description: String {
        switch self {
        case .malformed: return "malformed could-not-read notice"
        case .unsupportedVersion(let v): return "unsupported could-not-read notice version \(v)"
        case .badSignature: return "could-not-read notice is not signed by that device key"
        case .otherConversation: return "could-not-read notice belongs to another conversation"
        case .otherSession: return "could-not-read notice was written for an earlier session"
        }
    }
}
