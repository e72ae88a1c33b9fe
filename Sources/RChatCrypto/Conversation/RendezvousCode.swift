import RChatCore

/// A code a side presents to the relay to be linked with its contact (docs/PROTOCOL.md, blinded
/// pairing). The relay links two live connections that present an equal code; without the
/// conversation secret it cannot compute codes, and codes of different days look unrelated.
///
/// - Reconnect code: `keyed-BLAKE2b(secret, "rv" ‖ day ‖ counter)`, changes every day and
///   every session (see `ReconnectCounter` for how counters move on).
/// - Recovery code: `keyed-BLAKE2b(secret, "rv-recovery" ‖ day)`, counter-free, so a side
///   that lost its saved state (and with it the counter) can still meet its contact.
///
/// `day` is unix seconds / 86400; both numbers are 64-bit big-endian.
public struct RendezvousCode: Hashable, Sendable, CustomStringConvertible {
    public static let byteCount = 32
    public static let secondsPerDay: Int64 = 86_400

    public enum Kind: Hashable, Sendable {
        case reconnect(counter: UInt64)
        case recovery
    }

    /// What the relay compares.
    public let bytes: [UInt8]
    public let day: UInt64
    public let kind: Kind

    public var description: String { "rv(\(day), \(kind)) \(Hex.encode(bytes.prefix(6)))…" }

    /// The day number a time falls in (times before 1970 count as day 0).
    public static func day(at unixSeconds: Int64) -> UInt64 {
        UInt64(max(0, unixSeconds) / secondsPerDay)
    }

    public static func reconnect(_ conversation: ConversationSecret, day: UInt64, counter: UInt64) -> RendezvousCode {
        var m = ByteWriter(capacity: 18)
        m.raw(Array("rv".utf8)); m.u64(day); m.u64(counter)
        return RendezvousCode(bytes: Hash.blake2b(m.bytes, key: conversation.key, outputBytes: byteCount),
                              day: day, kind: .reconnect(counter: counter))
    }

    public static func recovery(_ conversation: ConversationSecret, day: UInt64) -> RendezvousCode {
        var m = ByteWriter(capacity: 19)
        m.raw(Array("rv-recovery".utf8)); m.u64(day)
        return RendezvousCode(bytes: Hash.blake2b(m.bytes, key: conversation.key, outputBytes: byteCount),
                              day: day, kind: .recovery)
    }

    /// What one side presents for one conversation (docs/PROTOCOL.md, "What a relay can
    /// link").
    public enum Presentation: Hashable, Sendable {
        /// Saved state with counter c: reconnect codes for c only. Never today's recovery
        /// code while the counter code may be enough (the contact is online, or comes online
        /// and presents it), so reconnects that meet by counter cannot be linked to one
        /// another by a code they share.
        case counter(UInt64)
        /// The counter codes found nobody for a while: the contact may have started over, or
        /// one side failed to save the counter of the last session. Also today's recovery code.
        case counterAndRecovery(UInt64)
        /// No saved state (reinstalled, restored, new machine): recovery codes only.
        case startedOver

        /// What a side presents first: its counter codes alone, or recovery codes when it has
        /// no counter.
        public static func first(reconnectCounter: UInt64?) -> Presentation {
            reconnectCounter.map(Presentation.counter) ?? .startedOver
        }
    }

    /// The codes one side presents for one conversation at `now` (at most 4).
    ///
    /// - `.counter(c)`: reconnect codes for days d-1, d, d+1 with counter c: clocks up to two
    ///   days apart meet (each side's window reaches one day). Counters move on after every
    ///   session to a value neither side presented before (`ReconnectCounter`).
    /// - `.counterAndRecovery(c)`: the same and today's recovery code, so a contact that
    ///   started over, or whose counter is not this side's (a crash before saving), meets it.
    /// - `.startedOver`: recovery codes for days d-1, d, d+1 (the established side presents
    ///   only its own today, so the skew window — one day — lives here).
    ///
    /// Trade-off of the recovery code: it is the same for every reconnect of the day, so a
    /// relay can link the links of one pair that presented it within a day (never across days).
    public static func presented(for conversation: ConversationSecret, at now: Int64,
                                 _ presentation: Presentation) -> [RendezvousCode] {
        let today = day(at: now)
        let days = (today == 0 ? [0, 1] : [today - 1, today, today + 1])
        switch presentation {
        case .startedOver:
            return days.map { recovery(conversation, day: $0) }
        case .counter(let c):
            return days.map { reconnect(conversation, day: $0, counter: c) }
        case .counterAndRecovery(let c):
            return days.map { reconnect(conversation, day: $0, counter: c) } + [recovery(conversation, day: today)]
        }
    }
}
