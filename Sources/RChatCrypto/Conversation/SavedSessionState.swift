import RChatCore

/// One conversation's saved session state (docs/PROTOCOL.md, "Conversation protocol"): the current session's keys, the
/// reconnect counter, the next send sequence, and the receive keys of older sessions the
/// relay may still hold frames for. The engine seals `serialized()` with `SealingKey` and
/// commits it with the messages it decrypted; this type does no I/O.
///
/// Layout (big-endian):
///
///     u8  format version (1)
///     u64 reconnect counter
///     u8  0 = no current session, 1 = one follows:
///         16 session id ‖ u8 my role ‖ 32 send key ‖ 32 receive key ‖
///         u64 next send sequence ‖ i64 started at (unix seconds)
///     u32 count of older sessions, each:
///         16 session id ‖ u8 sender's role ‖ 32 receive key ‖ i64 retired at
public struct SavedSessionState: Sendable {
    public static let formatVersion: UInt8 = 1
    /// The relay holds a frame for at most 72 h (a hard cap), so an older session's receive
    /// key is kept for 72 h after the session was replaced and not a second longer.
    public static let retention: Int64 = 72 * 3600

    public struct CurrentSession: Sendable {
        public let keys: SessionKeys
        /// The sequence number the next envelope sent in this session takes.
        public var nextSendSequence: UInt64
        public let startedAt: Int64
    }

    public struct OlderSession: Sendable {
        public let receiving: ReceiveKey
        public let retiredAt: Int64
    }

    public var reconnectCounter: UInt64
    public private(set) var current: CurrentSession?
    /// Oldest first.
    public private(set) var older: [OlderSession]

    public init(reconnectCounter: UInt64 = ReconnectCounter.initial) {
        self.reconnectCounter = reconnectCounter
        current = nil
        older = []
    }

    /// Makes `session` current: the previous one (if any) keeps only its receive key, and the
    /// counter takes the value both sides agreed on.
    ///
    /// `confirmed: false` (the responder, which begins when it answers): the initiator may
    /// not live to complete the handshake, and then what was sent in the new session could
    /// never be read. So the previous session, which the peer surely holds, keeps sending
    /// until `confirm()` — the first frame the peer sends in the new one. (Not for a peer
    /// that started over: it holds no previous session.)
    ///
    /// `peerHolds`: whether the peer is known to hold the new session already (the
    /// initiator, which read the responder's reply); else only once `confirm()`.
    public mutating func begin(_ session: Session, at now: Int64, confirmed: Bool = true, peerHolds: Bool = true) {
        // Still unconfirmed from an earlier answer: the session the peer surely holds is
        // the one sending already, not the unconfirmed one about to be replaced — and a
        // current session the peer was never shown to hold is no fallback at all.
        let fallback = sendingUntilConfirmed ?? (peerHoldsCurrent ? current : nil)
        endCurrent(at: now)
        current = CurrentSession(keys: session.keys, nextSendSequence: 0, startedAt: now)
        sendingUntilConfirmed = confirmed ? nil : fallback
        peerHoldsCurrent = peerHolds
        reconnectCounter = session.nextReconnectCounter
    }

    /// The peer sent a frame in the current session: it holds it, so sending moves to it.
    public mutating func confirm() {
        sendingUntilConfirmed = nil
        peerHoldsCurrent = true
    }

    /// Whether the peer is known to hold the current session (it sent a frame in it, or
    /// this side initiated it): what nothing else could ever recover — a could-not-read
    /// notice — goes only then. In memory only, like `sendingUntilConfirmed`.
    public private(set) var peerHoldsCurrent = false

    /// Whether `sendKeys` belong to a session the peer holds: what goes once and is never
    /// recovered if unreadable — receipts — goes only then.
    public var peerHoldsSendingSession: Bool { sendingUntilConfirmed != nil || peerHoldsCurrent }

    /// The session this side sends in while the current one is unconfirmed; in memory
    /// only (a restart begins a new session anyway).
    public private(set) var sendingUntilConfirmed: CurrentSession?

    /// The keys to send with now: the previous session's while the current one is
    /// unconfirmed, else the current one's; nil without a session.
    public var sendKeys: SessionKeys? { (sendingUntilConfirmed ?? current)?.keys }

    /// The peer sent a message request, which it does only when it holds no session with
    /// this side (it started over): no session counts as held by it until it sends a frame
    /// in one (`confirm()`) or a new one begins. Receipts, which are never recovered if
    /// unreadable, wait till then.
    public mutating func peerHoldsNone() {
        sendingUntilConfirmed = nil
        peerHoldsCurrent = false
    }

    /// The link is gone: keep only the current session's receive key.
    public mutating func endCurrent(at now: Int64) {
        if let c = current { older.append(OlderSession(receiving: c.keys.receiving, retiredAt: now)) }
        current = nil
        sendingUntilConfirmed = nil
        peerHoldsCurrent = false
    }

    /// Takes the next send sequence of the session `sendKeys` belong to; nil without one.
    public mutating func takeSendSequence() -> UInt64? {
        if let n = sendingUntilConfirmed?.nextSendSequence {
            sendingUntilConfirmed!.nextSendSequence = n &+ 1
            return n
        }
        guard let n = current?.nextSendSequence else { return nil }
        current!.nextSendSequence = n &+ 1
        return n
    }

    /// Drops older sessions retired more than `retention` seconds before `now`.
    public mutating func prune(now: Int64) {
        older.removeAll { now - $0.retiredAt > Self.retention }
    }

    /// Every key that may open a frame the peer sent: current session first.
    public var receiveKeys: [ReceiveKey] {
        (current.map { [$0.keys.receiving] } ?? []) + older.reversed().map(\.receiving)
    }

    /// Whether `key` (by identity) is one of `receiveKeys`, without building that list.
    public func holdsReceiveKey(_ key: SecretBytes) -> Bool {
        current?.keys.receiving.key === key || older.contains { $0.receiving.key === key }
    }

    // MARK: bytes

    static let currentBytes = SessionKeys.sessionIDBytes + 1 + 2 * AEAD.keyBytes + 8 + 8
    static let olderBytes = SessionKeys.sessionIDBytes + 1 + AEAD.keyBytes + 8

    /// The state as bytes. They hold key material: seal them and `wipe` the array.
    public func serialized() -> [UInt8] {
        let count = 1 + 8 + 1 + (current == nil ? 0 : Self.currentBytes) + 4 + older.count * Self.olderBytes
        return FixedWriter.build(count: count) { w in
            w.u8(Self.formatVersion)
            w.u64(reconnectCounter)
            if let c = current {
                w.u8(1)
                w.raw(c.keys.sessionID)
                w.u8(c.keys.role.rawValue)
                w.secret(c.keys.sendKey)
                w.secret(c.keys.receiveKey)
                w.u64(c.nextSendSequence)
                w.u64(UInt64(bitPattern: c.startedAt))
            } else {
                w.u8(0)
            }
            w.u32(UInt32(older.count))
            for o in older {
                w.raw(o.receiving.sessionID)
                w.u8(o.receiving.senderRole.rawValue)
                w.secret(o.receiving.key)
                w.u64(UInt64(bitPattern: o.retiredAt))
            }
        }
    }

    /// Reads `serialized()` output. A different format version is `.unsupportedVersion`, so a
    /// state written by a newer rChat is refused clearly rather than misread.
    public init(serialized bytes: [UInt8]) throws(SavedSessionStateError) {
        var r = ByteReader(bytes)
        do {
            let version = try r.u8()
            guard version == Self.formatVersion else { throw SavedSessionStateError.unsupportedVersion(version) }
            reconnectCounter = try r.u64()
            switch try r.u8() {
            case 0:
                current = nil
            case 1:
                let id = try r.raw(SessionKeys.sessionIDBytes)
                let role = try Self.role(try r.u8())
                let send = try r.secret(AEAD.keyBytes)
                let receive = try r.secret(AEAD.keyBytes)
                let next = try r.u64()
                let started = Int64(bitPattern: try r.u64())
                current = CurrentSession(keys: SessionKeys(sessionID: id, role: role, sendKey: send, receiveKey: receive),
                                         nextSendSequence: next, startedAt: started)
            default:
                throw SavedSessionStateError.malformed
            }
            let count = Int(try r.u32())
            guard count <= r.remaining / Self.olderBytes else { throw SavedSessionStateError.malformed }
            older = []
            older.reserveCapacity(count)
            for _ in 0..<count {
                let id = try r.raw(SessionKeys.sessionIDBytes)
                let role = try Self.role(try r.u8())
                let key = try r.secret(AEAD.keyBytes)
                let retired = Int64(bitPattern: try r.u64())
                older.append(OlderSession(receiving: ReceiveKey(sessionID: id, senderRole: role, key: key), retiredAt: retired))
            }
            guard r.isAtEnd else { throw SavedSessionStateError.malformed }
        } catch let e as SavedSessionStateError {
            throw e
        } catch {
            throw .malformed
        }
    }

    private static func role(_ raw: UInt8) throws(SavedSessionStateError) -> Handshake.Role {
        guard let role = Handshake.Role(rawValue: raw) else { throw .malformed }
        return role
    }
}

public enum SavedSessionStateError: Error, Equatable, CustomStringConvertible {
    /// Written in another format (a newer rChat): refuse rather than misread.
    case unsupportedVersion(UInt8)
    case malformed

    public var description: String {
        switch self {
        case .unsupportedVersion(let v): return "saved session state has format version \(v); this rChat reads version \(SavedSessionState.formatVersion)"
        case .malformed: return "saved session state is malformed"
        }
    }
}
