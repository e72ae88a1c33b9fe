import RChatCore

/// A code a side presents to the relay to be linked with its contact (docs/PROTOCOL.md, blinded
/// pairing). The relay links two live connections that present an equal code; without the
/// conversation secret it cannot compute codes, and codes of different days look unrelated.
///
/// - Reconnect code: `keyed-BLAKE2b(secret, "rv" ‖ day ‖ counter)`, changes every day and
///   every reconnect (see `ReconnectCounter` for how counters stay within one of each other).
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

    /// The codes one side presents for one conversation at `now` (at most 9).
    ///
    /// - With saved state (`reconnectCounter` = the stored counter c): reconnect codes for
    ///   days d-1, d, d+1 × counters c, c+1 — clocks up to two days apart (each side's
    ///   window reaches one day), and a peer one reconnect ahead because one side crashed
    ///   before saving (see `ReconnectCounter`) — plus today's recovery
    ///   code when `listenForRecovery`, so a contact that started over can find this side.
    /// - Without saved state (`reconnectCounter == nil`: reinstalled, restored, new machine):
    ///   recovery codes for days d-1, d, d+1 (the established side presents only its own
    ///   today, so the skew window — one day — lives here).
    ///
    /// Trade-off of `listenForRecovery`: the recovery code is the same for every reconnect of
    /// the day, so a relay can link one pair's links within a day (never across days). Turn
    /// it off only if the engine can accept that a contact who started over is not found.
    public static func presented(for conversation: ConversationSecret, at now: Int64,
                                 reconnectCounter: UInt64?, listenForRecovery: Bool = true) -> [RendezvousCode] {
        let today = day(at: now)
        let days = (today == 0 ? [0, 1] : [today - 1, today, today + 1])
        guard let c = reconnectCounter else {
            return days.map { recovery(conversation, day: $0) }
        }
        var codes: [RendezvousCode] = []
        for d in days {
            for counter in [c, c &+ 1] { codes.append(reconnect(conversation, day: d, counter: counter)) }
        }
        if listenForRecovery { codes.append(recovery(conversation, day: today)) }
        return codes
    }
}
