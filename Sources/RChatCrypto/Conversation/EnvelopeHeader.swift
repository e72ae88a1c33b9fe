import RChatCore

/// What an envelope carries.
public enum EnvelopeKind: UInt8, Sendable, CaseIterable {
    case message = 1
    case receiptDelivered = 2
    case receiptRead = 3
    /// A signed statement such as a could-not-read notice.
    case notice = 4
    /// Padding traffic with nothing to show.
    case cover = 5
    /// The sender's new account key, signed by the key the receiver pinned (`keys rotate`).
    case keyRotation = 6
    /// The receiver of a key rotation pinned the new key.
    case keyRotationAccepted = 7
    /// One chunk of an attachment's encrypted file; the header's message id is the
    /// attachment's. Body: u32 chunk index, then for chunk 0 the 24-byte stream header,
    /// then the chunk as `FileStream` encrypted it.
    case chunk = 8
    /// Delivered receipts for attachments: each file is whole on the receiver, fsynced, and
    /// its hash checked. Body as for the other receipts (u16 count, then the ids).
    case fileDelivered = 9
    /// How far a file being received has come: body u32, the chunks stored there. The
    /// sender keeps at most a window of chunks ahead of it while the receiver is online.
    case fileProgress = 10
    /// A message item written with a disappearing timer: body u32 seconds, then the content
    /// as kind 1 carries it. The receiver keeps the message for that long once it was shown.
    case timedMessage = 11
    /// The receiver did not take in the file with this message id (`IncomingFilePolicy`):
    /// body u8 why (1 over its limit, 2 too many of the sender's files arriving at once,
    /// 3 no room on its disk), then u64 the figure (the limit in MB, the files arriving, the
    /// bytes free). The sender says so in a row; its copy stays Sent, never Delivered.
    case fileRefused = 12
    /// A message of a group, to one member over its pairwise session (the first item kind a
    /// version before groups keeps whole and shows as needing a newer rChat). Body: the
    /// group's id (32 bytes), u32 timer seconds (0: none), then the content as kind 1
    /// carries it. The header's message id is the message's, the same for every member.
    case groupMessage = 13
    /// Delivered receipts for a group's messages: the group's id (32 bytes), then as kind 2
    /// (u16 count, the ids). In the range an earlier version lets pass unseen.
    case groupReceiptDelivered = 128
    /// Read receipts for a group's messages, laid out as `groupReceiptDelivered`.
    case groupReceiptRead = 129
    /// The changes the sender's log of a group holds: the group's id (32 bytes), a u16 count
    /// (at most 1,800: a longer log names its newest), the ids (32 bytes each). Sent, never
    /// stored, to a member whose group message named heads other than the sender's; they
    /// hand on the changes it lacks, and send their own if it holds some they lack.
    case groupSync = 130
    /// The heads of the sender's log of a group: the group's id (32 bytes), a u8 count (at
    /// most 16), the heads (32 bytes each). Sent, never stored, at each session with a member
    /// of it: one whose log has other heads tells every change it holds (`groupSync`).
    case groupHeads = 131
    /// A kind a later version wrote and this one does not know (its number is the header's
    /// `wireKind`): never sent. In 13 … 127 (`NewerItem.envelopeKinds`, 13 this version's
    /// group message) an item to keep whole and show as needing a newer rChat; in 128 … 255
    /// (128 … 131 this version's) something that may pass unseen.
    case newer = 0

    /// The kinds this version writes.
    public static var known: [EnvelopeKind] { allCases.filter { $0 != .newer } }

    /// What someone wrote (an item): it takes the sending half of a DH step the ratchet
    /// owes (`Ratchet.nextSendKey`). What rChat sends by itself rides the chain as it is.
    public var takesRatchetStep: Bool { [.message, .timedMessage, .groupMessage].contains(self) }
}

/// The part of an envelope sealed under the conversation's header key: readable by anyone
/// holding the account keys — so a reinstalled side can learn which ids it missed — and by
/// nobody else, the relay included.
public struct EnvelopeHeader: Sendable, Equatable {
    /// `.newer` for a kind this version does not know: `wireKind` says which.
    public let kind: EnvelopeKind
    /// The kind byte as it came (what the body's seal binds to).
    public let wireKind: UInt8
    public let messageID: MessageID
    /// The sender's number for this envelope within its session, from 0.
    public let sequence: UInt64
    /// The session whose keys seal the body.
    public let sessionID: [UInt8]
    /// Which of the session's ratchet keys seals the body; nil in a frame of version 2
    /// (before the ratchet: the body under the session's key for its direction).
    public let ratchet: RatchetHeader?

    public init(kind: EnvelopeKind, messageID: MessageID, sequence: UInt64, sessionID: [UInt8], ratchet: RatchetHeader?) {
        precondition(kind != .newer, "this version writes only the kinds it knows")
        self.init(wireKind: kind.rawValue, messageID: messageID, sequence: sequence, sessionID: sessionID, ratchet: ratchet)
    }

    /// A header as it came: a kind byte this version does not know is `.newer`.
    init(wireKind: UInt8, messageID: MessageID, sequence: UInt64, sessionID: [UInt8], ratchet: RatchetHeader?) {
        precondition(sessionID.count == SessionKeys.sessionIDBytes)
        self.kind = EnvelopeKind(rawValue: wireKind) ?? .newer   // 0 is `.newer` too
        self.wireKind = wireKind
        self.messageID = messageID
        self.sequence = sequence
        self.sessionID = sessionID
        self.ratchet = ratchet
    }

    /// The frame version a header of this shape travels in.
    var frameVersion: UInt8 { ratchet == nil ? Envelope.legacyVersion : Envelope.version }

    static let legacyEncodedBytes = 1 + MessageID.byteCount + 8 + SessionKeys.sessionIDBytes
    static let encodedBytes = legacyEncodedBytes + RatchetHeader.encodedBytes
    static func encodedBytes(frameVersion: UInt8) -> Int { frameVersion == Envelope.legacyVersion ? legacyEncodedBytes : encodedBytes }

    /// An item of a kind a later version wrote, to keep (`NewerItem.envelopeKinds`).
    public var isNewerItem: Bool { kind == .newer && NewerItem.isEnvelopeKind(wireKind) }

    func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: Self.encodedBytes)
        write(to: &w)
        return w.bytes
    }

    private func write(to w: inout ByteWriter) {
        w.u8(wireKind)
        w.raw(messageID)
        w.u64(sequence)
        w.raw(sessionID)
        if let ratchet {
            w.raw(ratchet.publicKey)
            w.u32(ratchet.previousCount)
            w.u32(ratchet.number)
        }
    }

    static func decode(_ bytes: [UInt8], frameVersion: UInt8) throws(EnvelopeError) -> EnvelopeHeader {
        guard bytes.count == encodedBytes(frameVersion: frameVersion) else { throw .malformed }
        var r = ByteReader(bytes)
        do {
            let raw = try r.u8()
            // Kind 0 is no version's: only a forger writes it.
            guard raw != EnvelopeKind.newer.rawValue else { throw EnvelopeError.malformed }
            let id = MessageID(bytes: try r.slice(MessageID.byteCount))!
            let sequence = try r.u64()
            let session = try r.raw(SessionKeys.sessionIDBytes)
            let ratchet = frameVersion == Envelope.legacyVersion ? nil
                : RatchetHeader(publicKey: try r.raw(AgreementKey.keyBytes), previousCount: try r.u32(), number: try r.u32())
            return EnvelopeHeader(wireKind: raw, messageID: id, sequence: sequence, sessionID: session, ratchet: ratchet)
        } catch let e as EnvelopeError {
            throw e
        } catch {
            throw .malformed
        }
    }

    /// The length-prefixed label in front of every body's associated data.
    private static let bodyLabel: [UInt8] = {
        var w = ByteWriter()
        w.long(Array("rchat envelope body v1".utf8))
        return w.bytes
    }()

    /// What the body's seal binds to: the header fields, so a body cannot be moved under
    /// another header, position or session.
    func bodyAssociatedData() -> [UInt8] {
        var w = ByteWriter(capacity: Self.bodyLabel.count + 1 + Self.encodedBytes)
        w.raw(Self.bodyLabel)
        w.u8(frameVersion)
        write(to: &w)
        return w.bytes
    }
}

public enum EnvelopeError: Error, Equatable, CustomStringConvertible {
    case malformed
    case unsupportedVersion(UInt8)
    /// The header did not open with this conversation's key for the peer: not from the
    /// peer, altered, or not for this conversation.
    case headerUnreadable
    /// No key for the header's session (it was never known here, or has been pruned), or
    /// none for its place in the session's ratchet (used already, dropped over the bounds).
    case wrongSession
    /// The body did not open with the session's key: altered, moved, or a wrong key.
    case bodyUnreadable
    /// Its key opened a body already: a duplicate, or a replay.
    case replayed

    public var description: String {
        switch self {
        case .malformed: return "malformed envelope"
        case .unsupportedVersion(let v): return "unsupported envelope version \(v)"
        case .headerUnreadable: return "envelope header did not open"
        case .wrongSession: return "no key for the envelope's session"
        case .bodyUnreadable: return "envelope body did not open"
        case .replayed: return "envelope was opened already (a replay)"
        }
    }
}
