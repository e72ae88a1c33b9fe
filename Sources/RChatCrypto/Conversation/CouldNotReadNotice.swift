import RChatCore

/// "These messages could not be read here" (DESIGN §6): sent inside a new session by a side
/// that lost its state, signed with its DEVICE key. Only a notice that verifies against the
/// pinned device key may trigger an automatic resend, so a stolen copy of the account keys
/// alone can never cause one.
///
/// Layout:
///
///     u8  version (1)
///     16  conversation tag (`ConversationSecret.tag`)
///     i64 time written (unix seconds)
///     u16 count ‖ count × 16-byte message ids
///     64  device signature over "rchat could-not-read notice v1" ‖ all of the above
///
/// At most `maxMessageIDs` ids, so a notice fits a handshake extension (65535 bytes).
public struct CouldNotReadNotice: Sendable, Equatable {
    public static let version: UInt8 = 1
    public static let maxMessageIDs = 4000

    public let messageIDs: [MessageID]
    public let conversationTag: [UInt8]
    public let time: Int64

    public init(messageIDs: [MessageID], conversation: ConversationSecret, time: Int64) {
        precondition(messageIDs.count <= Self.maxMessageIDs, "split could-not-read notices at \(Self.maxMessageIDs) ids")
        self.messageIDs = messageIDs
        conversationTag = conversation.tag
        self.time = time
    }

    private init(messageIDs: [MessageID], conversationTag: [UInt8], time: Int64) {
        self.messageIDs = messageIDs
        self.conversationTag = conversationTag
        self.time = time
    }

    /// The notice as bytes, signed by this machine's device key.
    public func signed(by device: SigningKey) -> [UInt8] {
        let body = self.body()
        return body + device.sign(Self.signedMessage(body))
    }

    /// Checks the notice against `deviceKey` — the pinned one to allow an automatic resend,
    /// or the handshake's verified-but-unpinned one to show "Not delivered" — and against
    /// this conversation. Freshness (`time`) is for the caller to judge.
    public static func open(_ bytes: [UInt8], conversation: ConversationSecret,
                            signedBy deviceKey: [UInt8]) throws(CouldNotReadNoticeError) -> CouldNotReadNotice {
        guard let v = bytes.first else { throw .malformed }
        guard v == version else { throw .unsupportedVersion(v) }
        guard bytes.count >= 1 + ConversationSecret.tagBytes + 8 + 2 + SigningKey.signatureBytes else { throw .malformed }
        let body = Array(bytes[..<(bytes.count - SigningKey.signatureBytes)])
        let signature = Array(bytes[(bytes.count - SigningKey.signatureBytes)...])
        guard Signature.verify(signature, message: signedMessage(body), publicKey: deviceKey) else { throw .badSignature }
        var r = ByteReader(body, offset: 1)
        let notice: CouldNotReadNotice
        do {
            let tag = try r.raw(ConversationSecret.tagBytes)
            let time = Int64(bitPattern: try r.u64())
            let count = Int(try r.u16())
            guard count <= maxMessageIDs, r.remaining == count * MessageID.byteCount else { throw CouldNotReadNoticeError.malformed }
            var ids: [MessageID] = []
            ids.reserveCapacity(count)
            for _ in 0..<count { ids.append(MessageID(bytes: try r.raw(MessageID.byteCount))!) }
            notice = CouldNotReadNotice(messageIDs: ids, conversationTag: tag, time: time)
        } catch {
            throw .malformed
        }
        guard constantTimeEqual(notice.conversationTag, conversation.tag) else { throw .otherConversation }
        return notice
    }

    private func body() -> [UInt8] {
        var w = ByteWriter(capacity: 27 + messageIDs.count * MessageID.byteCount)
        w.u8(Self.version)
        w.raw(conversationTag)
        w.u64(UInt64(bitPattern: time))
        w.u16(UInt16(messageIDs.count))
        for id in messageIDs { w.raw(id) }
        return w.bytes
    }

    private static func signedMessage(_ body: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 40 + body.count)
        w.long(Array("rchat could-not-read notice v1".utf8))
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

    public var description: String {
        switch self {
        case .malformed: return "malformed could-not-read notice"
        case .unsupportedVersion(let v): return "unsupported could-not-read notice version \(v)"
        case .badSignature: return "could-not-read notice is not signed by that device key"
        case .otherConversation: return "could-not-read notice belongs to another conversation"
        }
    }
}
