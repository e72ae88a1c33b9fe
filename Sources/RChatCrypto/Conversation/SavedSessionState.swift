import RChatCore

/// One conversation's saved session state (docs/PROTOCOL.md, "Conversation protocol"): the
/// current session and its Double Ratchet, the reconnect counter, the next send sequence,
/// and the sessions the relay may still hold frames for (receive only). The engine seals
/// `serialized()` with `SealingKey` and commits it with the messages it decrypted, so a key
/// used for a stored message is gone from the state that commits it; this type does no I/O.
///
/// Layout (big-endian), format version 2:
///
///     u8  format version (2)
///     u64 reconnect counter
///     u8  0 = no current session, 1 = one follows (a session, as below)
///     u32 count of older sessions, each a session
///
///     session = 16 session id ‖ u8 my role ‖ u64 next send sequence ‖ i64 started at ‖
///               u8 0/1 ‖ i64 retired at (1: it was) ‖ u8 kind ‖ kind 1: 32 the peer's send key
///               (a session from before the ratchet: frames of version 2) | kind 2: the
///               ratchet (`Ratchet`)
///
/// Version 1 (before the ratchet) is read: its sessions become older ones of kind 1.
public struct SavedSessionState: Sendable {
    public static let formatVersion: UInt8 = 2
    static let legacyFormatVersion: UInt8 = 1
    /// The relay holds a frame for at most 72 h (a hard cap), so an older session's keys are
    /// kept for 72 h after the session was replaced and not a second longer.
    public static let retention: Int64 = 72 * 3600

    /// A session's keys: its ratchet, or (from before the ratchet) the key the peer sent with.
    enum Keys: Sendable {
        case legacy(SecretBytes)
        case ratchet(Ratchet)
    }

    public struct SessionState: Sendable {
        public let id: [UInt8]
        /// This side's role in the handshake that made the session.
        public let role: Handshake.Role
        var keys: Keys
        /// The sequence number the next envelope sent in this session takes.
        public var nextSendSequence: UInt64
        public let startedAt: Int64
        /// When it stopped being the current one.
        public var retiredAt: Int64?

        /// The ratchet's skipped keys held (0 for a session from before it).
        public var skippedKeys: Int { if case .ratchet(let r) = keys { r.skippedCount } else { 0 } }
    }

    public var reconnectCounter: UInt64
    public private(set) var current: SessionState?
    /// Oldest first: receive only, but for the one `sendingUntilConfirmed` names.
    public private(set) var older: [SessionState]

    /// Whether a session or a ratchet changed since `stored()` (a frame sealed or opened, a
    /// session begun, ended or pruned): in memory only.
    public private(set) var unsaved = false

    /// It was written to the store as it is now.
    public mutating func stored() { unsaved = false }

    public init(reconnectCounter: UInt64 = ReconnectCounter.initial) {
        self.reconnectCounter = reconnectCounter
        current = nil
        older = []
    }

    /// Makes `session` current: the previous one (if any) keeps only what receives, and the
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
        let fallback = sendingUntilConfirmed ?? (peerHoldsCurrent ? current?.id : nil)
        endCurrent(at: now)
        current = SessionState(id: session.keys.sessionID, role: session.keys.role, keys: .ratchet(session.ratchet),
                               nextSendSequence: 0, startedAt: now)
        sendingUntilConfirmed = confirmed ? nil : fallback
        peerHoldsCurrent = peerHolds
        reconnectCounter = session.nextReconnectCounter
        unsaved = true
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

    /// Whether the session sent in belongs to one the peer holds: what goes once and is
    /// never recovered if unreadable — receipts — goes only then.
    public var peerHoldsSendingSession: Bool { sendingUntilConfirmed != nil || peerHoldsCurrent }

    /// The id of the older session this side sends in while the current one is
    /// unconfirmed; in memory only (a restart begins a new session anyway).
    public private(set) var sendingUntilConfirmed: [UInt8]?

    /// The session sent in now: the previous one while the current one is unconfirmed,
    /// else the current one; nil without a session (or one from before the ratchet, which
    /// never sends again).
    public var sendingSessionID: [UInt8]? {
        guard let (older, index) = sendingIndex else { return nil }
        return older ? self.older[index].id : current!.id
    }

    /// The ratchet public keys of every session, which the next envelope each seals names:
    /// they change with each DH step (a frame under a new key of the peer's opened).
    public var ratchetKeys: [[UInt8]] {
        ((current.map { [$0] } ?? []) + older).compactMap { session in
            guard case .ratchet(let ratchet) = session.keys else { return nil }
            return ratchet.publicKey
        }
    }

    /// Whether an envelope can be sealed now (`seal`).
    public var canSeal: Bool { sendingIndex != nil }

    private var sendingIndex: (older: Bool, index: Int)? {
        if let id = sendingUntilConfirmed {
            guard let i = older.firstIndex(where: { $0.id == id }), case .ratchet = older[i].keys else { return nil }
            return (true, i)
        }
        guard let c = current, case .ratchet = c.keys else { return nil }
        return (false, 0)
    }

    /// The peer sent a message request, which it does only when it holds no session with
    /// this side (it started over): no session counts as held by it until it sends a frame
    /// in one (`confirm()`) or a new one begins. Receipts, which are never recovered if
    /// unreadable, wait till then.
    public mutating func peerHoldsNone() {
        sendingUntilConfirmed = nil
        peerHoldsCurrent = false
    }

    /// The link is gone: the current session only receives from now on.
    public mutating func endCurrent(at now: Int64) {
        if var c = current {
            c.retiredAt = now
            older.append(c)
        }
        current = nil
        sendingUntilConfirmed = nil
        peerHoldsCurrent = false
        unsaved = true
    }

    /// Seals an envelope in the session sent in now, under the next key of its ratchet
    /// (which moves on: that key is gone once the envelope is made); nil without one.
    public mutating func seal(kind: EnvelopeKind, messageID: MessageID, body: [UInt8], conversation: ConversationSecret) -> [UInt8]? {
        seal(wireKind: kind.rawValue, messageID: messageID, body: body, conversation: conversation)
    }

    /// The same with the kind byte as given (tests play a later version with a kind this
    /// one does not know).
    mutating func seal(wireKind: UInt8, messageID: MessageID, body: [UInt8], conversation: ConversationSecret) -> [UInt8]? {
        guard let (isOlder, index) = sendingIndex else { return nil }
        unsaved = true
        func sealing(_ session: inout SessionState) -> [UInt8] {
            guard case .ratchet(var ratchet) = session.keys else { preconditionFailure("sendingIndex names ratchet sessions only") }
            let (ratchetHeader, key) = ratchet.nextSendKey(stepping: EnvelopeKind(rawValue: wireKind)?.takesRatchetStep ?? NewerItem.isEnvelopeKind(wireKind))
            session.keys = .ratchet(ratchet)
            let header = EnvelopeHeader(wireKind: wireKind, messageID: messageID, sequence: session.nextSendSequence, sessionID: session.id,
                                        ratchet: ratchetHeader)
            session.nextSendSequence &+= 1
            return Envelope.seal(header, body: body, key: key, senderRole: session.role, conversation: conversation)
        }
        return isOlder ? sealing(&older[index]) : sealing(&current!)
    }

    /// Opens the body of the peer's envelope: with the key its header names, from the
    /// session it names. The ratchet keeps its move only when the body opened, so a frame
    /// altered on the way changes nothing. `.wrongSession`: no key for it here — a session
    /// this side no longer holds, or a key dropped over the bounds (`Ratchet`); `.replayed`:
    /// its key opened a body already.
    public mutating func open(_ frame: ArraySlice<UInt8>, header: EnvelopeHeader, at now: Int64) throws(EnvelopeError) -> [UInt8] {
        guard let session = session(header.sessionID) else { throw .wrongSession }
        guard header.ratchet != nil else {
            // A frame of version 2, of a session from before the ratchet (a forger's else).
            guard case .legacy(let key) = session.keys else { throw .bodyUnreadable }
            return try Envelope.openBody(frame, header: header, key: key, senderRole: session.role.peer)
        }
        var moved = self
        let key = try moved.takeKey(header, at: now)
        let body = try Envelope.openBody(frame, header: header, key: key, senderRole: session.role.peer)
        self = moved
        return body
    }

    public mutating func open(_ frame: [UInt8], header: EnvelopeHeader, at now: Int64) throws(EnvelopeError) -> [UInt8] {
        try open(frame[...], header: header, at: now)
    }

    /// The session with this id: the current one, or an older one.
    private func session(_ id: [UInt8]) -> SessionState? {
        current?.id == id ? current : older.last(where: { $0.id == id })
    }

    /// The key of the peer's envelope with `header`, its session's ratchet moved past it
    /// (`open` keeps the move only when the body opened; an envelope another thread opened
    /// with a key from `lookahead` is taken only if it is the same key).
    public mutating func takeKey(_ header: EnvelopeHeader, at now: Int64) throws(EnvelopeError) -> SecretBytes {
        guard let ratchetHeader = header.ratchet else { throw .bodyUnreadable }
        func take(_ session: inout SessionState) throws(EnvelopeError) -> SecretBytes {
            // A ratchet's frame in a session from before the ratchet: only a forger makes one.
            guard case .ratchet(var ratchet) = session.keys else { throw .bodyUnreadable }
            let key: SecretBytes
            do { key = try ratchet.receiveKey(ratchetHeader, at: now) } catch {
                switch error {
                case .used: throw .replayed
                case .lost: throw .wrongSession
                case .implausible: throw .bodyUnreadable
                }
            }
            session.keys = .ratchet(ratchet)
            return key
        }
        let key: SecretBytes
        if current?.id == header.sessionID {
            key = try take(&current!)
        } else {
            guard let i = older.lastIndex(where: { $0.id == header.sessionID }) else { throw .wrongSession }
            key = try take(&older[i])
        }
        unsaved = true
        return key
    }

    /// The keys ahead in the receiving chain of session `id` (`Ratchet.lookahead`), and the
    /// role of the peer who seals with them.
    public func lookahead(session id: [UInt8], upTo count: Int, continuing cache: Ratchet.Lookahead?)
        -> (senderRole: Handshake.Role, keys: Ratchet.Lookahead)? {
        guard let session = session(id), case .ratchet(let ratchet) = session.keys,
              let keys = ratchet.lookahead(upTo: count, continuing: cache) else { return nil }
        return (session.role.peer, keys)
    }

    /// Drops older sessions retired more than `retention` seconds before `now` (not the one
    /// sent in while the current one is unconfirmed), and skipped keys past their time.
    public mutating func prune(now: Int64) {
        older.removeAll { now - ($0.retiredAt ?? now) > Self.retention && $0.id != sendingUntilConfirmed }
        for i in older.indices { older[i].prune(now: now) }
        current?.prune(now: now)
        unsaved = true
    }

    /// The receive keys of sessions from before the ratchet (the relay reader threads open
    /// their frames: `EnvelopeKeyring`), newest first.
    public var legacyReceiveKeys: [ReceiveKey] {
        older.reversed().compactMap { session in
            guard case .legacy(let key) = session.keys else { return nil }
            return ReceiveKey(sessionID: session.id, senderRole: session.role.peer, key: key)
        }
    }

    /// The current session's ratchet, if it has one (tests).
    var currentRatchet: Ratchet? {
        guard case .ratchet(let ratchet)? = current?.keys else { return nil }
        return ratchet
    }

    /// Every secret the state holds, of every session (`Ratchet.heldSecrets`).
    var heldSecrets: [SecretBytes] {
        ((current.map { [$0] } ?? []) + older).flatMap { session -> [SecretBytes] in
            switch session.keys {
            case .legacy(let key): [key]
            case .ratchet(let ratchet): ratchet.heldSecrets
            }
        }
    }

    /// Whether `key` (by identity) is one of `legacyReceiveKeys`, without building that list.
    public func holdsReceiveKey(_ key: SecretBytes) -> Bool {
        older.contains { if case .legacy(let k) = $0.keys { k === key } else { false } }
    }

    // MARK: bytes

    /// The state as bytes. They hold key material: seal them and `wipe` the array.
    public func serialized() -> [UInt8] {
        let sessions = (current.map { [$0] } ?? []) + older
        let count = 1 + 8 + 1 + 4 + sessions.reduce(0) { $0 + $1.serializedCount }
        return FixedWriter.build(count: count) { w in
            w.u8(Self.formatVersion)
            w.u64(reconnectCounter)
            if let current {
                w.u8(1)
                current.write(to: &w)
            } else {
                w.u8(0)
            }
            w.u32(UInt32(older.count))
            for o in older { o.write(to: &w) }
        }
    }

    /// Reads `serialized()` output (and version 1's). A different format version is
    /// `.unsupportedVersion`, so a state written by a newer rChat is refused clearly rather
    /// than misread.
    public init(serialized bytes: [UInt8]) throws(SavedSessionStateError) {
        var r = ByteReader(bytes)
        do {
            let version = try r.u8()
            if version == Self.legacyFormatVersion {
                self = try Self.readLegacy(&r)
                return
            }
            guard version == Self.formatVersion else { throw SavedSessionStateError.unsupportedVersion(version) }
            reconnectCounter = try r.u64()
            switch try r.u8() {
            case 0: current = nil
            case 1: current = try SessionState(reading: &r)
            default: throw SavedSessionStateError.malformed
            }
            let count = Int(try r.u32())
            guard count <= r.remaining / SessionState.smallestBytes else { throw SavedSessionStateError.malformed }
            older = try (0..<count).map { _ in try SessionState(reading: &r) }
            guard r.isAtEnd else { throw SavedSessionStateError.malformed }
        } catch let e as SavedSessionStateError {
            throw e
        } catch {
            throw .malformed
        }
    }

    /// Version 1: u64 reconnect counter ‖ u8 0/1 [16 session id ‖ u8 my role ‖ 32 send key ‖
    /// 32 receive key ‖ u64 next send sequence ‖ i64 started at] ‖ u32 count × [16 session
    /// id ‖ u8 sender's role ‖ 32 receive key ‖ i64 retired at]. Every session only receives
    /// now (a restart begins a new session anyway): the current one is retired as read.
    private static func readLegacy(_ r: inout ByteReader) throws -> SavedSessionState {
        var state = SavedSessionState(reconnectCounter: try r.u64())
        var sessions: [SessionState] = []
        var current: SessionState?
        switch try r.u8() {
        case 0: break
        case 1:
            let id = try r.raw(SessionKeys.sessionIDBytes)
            let role = try role(try r.u8())
            _ = try r.secret(AEAD.keyBytes)
            let receive = try r.secret(AEAD.keyBytes)
            let next = try r.u64()
            let started = Int64(bitPattern: try r.u64())
            current = SessionState(id: id, role: role, keys: .legacy(receive), nextSendSequence: next, startedAt: started, retiredAt: started)
        default: throw SavedSessionStateError.malformed
        }
        let count = Int(try r.u32())
        guard count <= r.remaining / (SessionKeys.sessionIDBytes + 1 + AEAD.keyBytes + 8) else { throw SavedSessionStateError.malformed }
        for _ in 0..<count {
            let id = try r.raw(SessionKeys.sessionIDBytes)
            let senderRole = try role(try r.u8())
            let key = try r.secret(AEAD.keyBytes)
            let retired = Int64(bitPattern: try r.u64())
            sessions.append(SessionState(id: id, role: senderRole.peer, keys: .legacy(key), nextSendSequence: 0, startedAt: retired, retiredAt: retired))
        }
        guard r.isAtEnd else { throw SavedSessionStateError.malformed }
        state.older = sessions + (current.map { [$0] } ?? [])
        return state
    }

    static func role(_ raw: UInt8) throws(SavedSessionStateError) -> Handshake.Role {
        guard let role = Handshake.Role(rawValue: raw) else { throw .malformed }
        return role
    }
}

extension SavedSessionState.SessionState {
    static let smallestBytes = SessionKeys.sessionIDBytes + 1 + 8 + 8 + 9 + 1 + AEAD.keyBytes

    var serializedCount: Int {
        let keyBytes = switch keys {
        case .legacy: AEAD.keyBytes
        case .ratchet(let r): r.serializedCount
        }
        return SessionKeys.sessionIDBytes + 1 + 8 + 8 + 9 + 1 + keyBytes
    }

    func write(to w: inout FixedWriter) {
        w.raw(id)
        w.u8(role.rawValue)
        w.u64(nextSendSequence)
        w.u64(UInt64(bitPattern: startedAt))
        w.u8(retiredAt == nil ? 0 : 1)
        w.u64(UInt64(bitPattern: retiredAt ?? 0))
        switch keys {
        case .legacy(let key): w.u8(1); w.secret(key)
        case .ratchet(let ratchet): w.u8(2); ratchet.write(to: &w)
        }
    }

    init(reading r: inout ByteReader) throws {
        id = try r.raw(SessionKeys.sessionIDBytes)
        role = try SavedSessionState.role(try r.u8())
        nextSendSequence = try r.u64()
        startedAt = Int64(bitPattern: try r.u64())
        let wasRetired = try r.u8()
        let retired = Int64(bitPattern: try r.u64())
        guard wasRetired <= 1 else { throw SavedSessionStateError.malformed }
        retiredAt = wasRetired == 1 ? retired : nil
        switch try r.u8() {
        case 1: keys = .legacy(try r.secret(AEAD.keyBytes))
        case 2: keys = .ratchet(try Ratchet(reading: &r))
        default: throw SavedSessionStateError.malformed
        }
    }

    mutating func prune(now: Int64) {
        guard case .ratchet(var ratchet) = keys else { return }
        ratchet.prune(now: now)
        keys = .ratchet(ratchet)
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
